import { buildFleet } from '../services/gateway/console/src/fleet.fixture';
import { rabbitmqctl } from '../test/services/rabbitmqctl';
import { launchChromium, openConsole, seriousViolations } from '../test/support/console-browser';
import { startGateway, tokens } from '../test/support/gateway';

async function main() {
  process.env.TEST_RUN_ID ??= `look-${process.pid}`;
  const vhost = `sf-look-${process.pid}`;
  await rabbitmqctl(['add_vhost', vhost]);
  await rabbitmqctl(['set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*']);
  const gateway = await startGateway(`amqp://guest:guest@127.0.0.1:5672/${vhost}`);
  const browser = await launchChromium();
  const fleet = buildFleet(40, Date.now());
  for (const hash of ['#/fleet', '#/devices/desk-0003']) {
    const opened = await openConsole(browser, gateway.url, { hash, token: tokens.all.token });
    const { page } = opened;
    await page.route(/\/devices(\?|\/)/, (route) => {
      const u = new URL(route.request().url());
      if (u.pathname.startsWith('/devices/')) {
        const d = fleet[3]!;
        const now = Date.now();
        return route.fulfill({ json: { ...d, timeline: {
          hourly: Array.from({ length: 24 }, (_, i) => ({ start: new Date(now - (23 - i) * 3600e3).toISOString(), items: (i * 7) % 30 })),
          daily: Array.from({ length: 30 }, (_, i) => ({ start: new Date(now - (29 - i) * 86400e3).toISOString(), items: (i * 53) % 400 })) } } });
      }
      const q = u.searchParams;
      const offset = Number(q.get('offset')), limit = Number(q.get('limit'));
      return route.fulfill({ json: { data: fleet.slice(offset, offset + limit), pagination: { limit, offset, total: fleet.length } } });
    });
    await page.reload();
    await page.waitForTimeout(1500);
    await page.screenshot({ path: `/tmp/31b-${hash.replace(/\W/g, '')}.png`, fullPage: true });
    console.log(hash, JSON.stringify(await seriousViolations(page)), opened.errors(), opened.httpErrors());
    await opened.close();
  }
  await browser.close();
  await gateway.close();
  await rabbitmqctl(['delete_vhost', vhost]);
}
main();
