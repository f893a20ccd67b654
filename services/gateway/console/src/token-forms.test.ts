import { scopes } from '@screenfleet/contracts';
import {
  codeRequest,
  credentialState,
  devicesFromText,
  expiryFromInput,
  listQuery,
  scopeHints,
  tokenRequest,
  tokenScopes,
  type TokenDraft,
} from './token-forms';

const buildTokenDraft = (overrides: Partial<TokenDraft> = {}): TokenDraft => ({
  name: 'desk-17',
  scopes: ['ingest'],
  devices: '',
  expires: '',
  ...overrides,
});

describe("the Tokens view's scopes", () => {
  it('when the scopes are offered, then they are exactly those of the contracts, in order, each with a hint', () => {
    expect([...tokenScopes]).toEqual([...scopes]);
    expect(Object.keys(scopeHints).sort()).toEqual([...scopes].sort());
  });
});

describe('devicesFromText', () => {
  it.each([
    ['', null],
    ['  , ,\n', null],
    ['desk-1', ['desk-1']],
    ['desk-1, desk-2 ,desk-3', ['desk-1', 'desk-2', 'desk-3']],
    ['desk-1\ndesk-2', ['desk-1', 'desk-2']],
    ['desk-1, desk-1', ['desk-1']],
    ['front desk, lab 2', ['front desk', 'lab 2']],
  ])('when %j is typed, then %j is sent', (text, devices) => {
    expect(devicesFromText(text)).toEqual(devices);
  });
});

describe('expiryFromInput', () => {
  it('when empty or not a time, then null (never expires)', () => {
    expect(expiryFromInput('')).toBeNull();
    expect(expiryFromInput('  ')).toBeNull();
    expect(expiryFromInput('tomorrow')).toBeNull();
  });

  it('when a local time, then the same instant as RFC 3339 with an offset', () => {
    const value = '2026-12-06T09:30';
    const sent = expiryFromInput(value)!;
    expect(sent).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(new Date(sent).getTime()).toBe(new Date(value).getTime());
  });
});

describe('tokenRequest', () => {
  it('when only a name and scopes are given, then the body has no devices and no expiry (any device, never expires)', () => {
    expect(tokenRequest(buildTokenDraft({ name: '  desk-17 ' }))).toEqual({
      name: 'desk-17',
      scopes: ['ingest'],
    });
  });

  it('when devices and an expiry are given, then they are sent as a list and an API time, scopes in the contracts order', () => {
    const body = tokenRequest(
      buildTokenDraft({
        scopes: ['audit:read', 'search', 'ingest'],
        devices: 'desk-1, desk-2',
        expires: '2026-12-06T09:30',
      }),
    );
    expect(body).toEqual({
      name: 'desk-17',
      scopes: ['ingest', 'search', 'audit:read'],
      devices: ['desk-1', 'desk-2'],
      expires_at: new Date('2026-12-06T09:30').toISOString(),
    });
  });
});

describe('codeRequest', () => {
  it('when a code is asked for, then uses is a number and the pattern is trimmed; an expiry only when given', () => {
    const draft = {
      name: 'lab desktops',
      scopes: ['ingest'] as const,
      devicePattern: ' lab-* ',
      uses: '200',
      expires: '',
    };
    expect(codeRequest(draft)).toEqual({
      name: 'lab desktops',
      scopes: ['ingest'],
      device_pattern: 'lab-*',
      uses: 200,
    });
    expect(codeRequest({ ...draft, expires: '2026-12-06T09:00' }).expires_at).toBe(
      new Date('2026-12-06T09:00').toISOString(),
    );
  });
});

describe('credentialState', () => {
  const now = new Date('2026-11-29T11:00:00Z');
  it.each([
    [{ revoked_at: null, expires_at: null }, 'active'],
    [{ revoked_at: null, expires_at: '2026-11-29T12:00:00Z' }, 'active'],
    [{ revoked_at: null, expires_at: '2026-11-29T11:00:00Z' }, 'expired'],
    [{ revoked_at: '2026-11-29T10:00:00Z', expires_at: '2026-11-01T00:00:00Z' }, 'revoked'],
  ])('when %j, then %s', (item, state) => {
    expect(credentialState(item, now)).toBe(state);
  });
});

describe('listQuery', () => {
  it('when revoked ones are asked for, then include_revoked=true; else no parameter', () => {
    expect(listQuery(true).toString()).toBe('include_revoked=true');
    expect(listQuery(false).toString()).toBe('');
  });
});
