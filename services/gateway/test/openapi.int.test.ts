import { buildOpenApiDocument } from '@screenfleet/contracts';
import { isolatedBroker } from '../../../test/services';
import { startGateway, type RunningGateway } from '../../../test/support/gateway';

describe('GET /openapi.json on a running gateway', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;

  beforeAll(async () => {
    broker = await isolatedBroker();
    gateway = await startGateway(broker.url);
  });
  afterAll(async () => {
    await gateway?.close();
    await broker?.remove();
  });

  it('when asked without a token, then it answers the document', async () => {
    const response = await fetch(`${gateway.url}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual(buildOpenApiDocument());
  });

  it('when each documented route is called without a token, then it is served (401, or 200 where the document asks for no token, 415 where such a route needs a JSON body; never 404)', async () => {
    const paths = buildOpenApiDocument().paths as Record<
      string,
      Record<string, { security?: unknown[]; requestBody?: { required?: boolean } }>
    >;
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const response = await fetch(`${gateway.url}${path}`, { method: method.toUpperCase() });
        // `security: []`: served without a token (/openapi.json, /health); one that takes a
        // body (POST /enroll) then refuses the bodiless call for its Content-Type.
        const tokenless = operation.security?.length === 0;
        const expected = !tokenless ? 401 : operation.requestBody?.required ? 415 : 200;
        expect({ method, path, status: response.status }).toEqual({
          method,
          path,
          status: expected,
        });
      }
    }
  });

  it('when POSTed, then it is a 405 naming GET', async () => {
    const response = await fetch(`${gateway.url}/openapi.json`, { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
  });
});
