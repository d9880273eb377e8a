// Drives the console in Chromium (playwright-core): logs in with the
// token, loads every page, approves a pin, forgets a lesson, runs the
// routing playground, and saves a screenshot of each page. Run by the Go
// test TestConsoleInBrowser; it exits non-zero on the first failed check.
//
// Environment: CONSOLE_URL (http://host:port/ui), CONSOLE_TOKEN,
// SHOTS (a directory), CHROMIUM (the browser), MODE (serve or ui).
import { chromium } from 'playwright-core';

const base = process.env.CONSOLE_URL;
const token = process.env.CONSOLE_TOKEN;
const shots = process.env.SHOTS;
const mode = process.env.MODE || 'serve';

function check(cond, what) {
  if (!cond) throw new Error('check failed: ' + what);
  console.log('ok: ' + what);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
const errors = [];
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
page.setDefaultTimeout(10000);
try {
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const shot = (name) => page.screenshot({ path: `${shots}/${mode}-${name}.png`, fullPage: true });

  // Not logged in: any page leads to the login form.
  await page.goto(`${base}/upstreams`);
  check(page.url().endsWith('/ui/login'), 'a page without a session redirects to the login');
  await shot('login');
  await page.fill('#token', 'not-the-token');
  await page.click('button[type=submit]');
  await page.waitForSelector('.flash', { timeout: 5000 });
  check((await page.textContent('.flash')).includes('not one of'), 'a wrong token is refused with a message');
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/ui\/upstreams$/);
  check(true, 'the token logs in');
  errors.length = 0; // the wrong token's 401 was meant

  // Upstreams.
  await page.waitForSelector('#upstreams');
  const rows = await page.locator('#upstreams tbody tr').count();
  check(rows >= 2, `upstreams lists ${rows} upstreams`);
  check(await page.locator('tr[data-upstream=calculator] .state-connected').count() === 1, 'calculator is connected');
  const restartButtons = await page.locator('#upstreams button').count();
  if (mode === 'serve') {
    check(restartButtons >= 2, 'each upstream has a restart button');
    await page.click('tr[data-upstream=docs] button');
    await page.waitForURL(/\/ui\/upstreams$/);
    await page.waitForFunction(() => {
      const row = document.querySelector('tr[data-upstream=docs]');
      return row && row.children[4].textContent.trim() === '1' && row.querySelector('.state-connected');
    }, null, { timeout: 15000 });
    check(true, 'restarting docs reconnects it, with one restart counted (live refresh)');
  } else {
    check(restartButtons === 0 && await page.isVisible('text=Read-only'), 'mcp-router ui shows upstreams read-only');
  }
  await shot('upstreams');

  // Catalog: search as you type, filter by upstream.
  await page.click('nav >> text=catalog');
  await page.waitForSelector('#tools');
  const all = await page.locator('#tools tbody tr').count();
  await page.fill('#q', 'quotient');
  await page.waitForFunction(() => document.querySelectorAll('#tools tbody tr').length === 1);
  check((await page.textContent('#tools tbody')).includes('calculator_divide'), `searching "quotient" narrows ${all} tools to calculator_divide`);
  await page.fill('#q', '');
  await page.selectOption('#upstream', 'docs');
  await page.waitForFunction(() => [...document.querySelectorAll('#tools tbody tr td:nth-child(2)')].every((td) => td.textContent === 'docs'));
  check(true, 'filtering by upstream shows only its tools');
  await shot('catalog');

  // Pins: the pending change as a diff, approved.
  await page.click('nav >> text=pins');
  await page.waitForSelector('h1:has-text("Tool pins")');
  if (mode === 'serve') {
    const card = page.locator('article.pin[data-tool="builtin:calculator/add"]');
    check(await card.count() === 1, 'the changed calculator/add waits for approval');
    check(await card.locator('pre.diff .d-').count() > 0 && await card.locator('pre.diff .d\\+').count() > 0, 'its change is shown as a diff');
    await shot('pins');
    await page.screenshot({ path: `${shots}/${mode}-pins-viewport.png` }); // the README's
    await card.locator('button.approve').click();
    await page.waitForURL(/\/ui\/pins$/);
    check(await page.locator('article.pin[data-tool="builtin:calculator/add"]').count() === 0, 'approving it clears the change');
    check(await page.isVisible('text=Nothing is waiting for approval'), 'nothing is left waiting');
  } else {
    await shot('pins');
  }

  // Lessons: forget one.
  await page.click('nav >> text=lessons');
  await page.waitForSelector('#lessons');
  const before = await page.locator('#lessons tbody tr').count();
  page.once('dialog', (d) => d.accept());
  await page.locator('#lessons tbody tr').first().locator('button').click();
  await page.waitForFunction((n) => document.querySelectorAll('#lessons tbody tr').length === n - 1, before);
  await shot('lessons');
  await page.reload();
  check(await page.locator('#lessons tbody tr').count() === before - 1, `forgetting a lesson leaves ${before - 1} after a reload`);

  // Activity: the calls made before the test, refreshed live.
  await page.click('nav >> text=activity');
  await page.waitForSelector('#calls');
  check((await page.textContent('#calls')).includes('calculator_multiply'), 'activity lists the call of calculator_multiply');
  check((await page.textContent('#calls tbody tr:has-text("calculator_divide")')).includes('tool_error'), 'dividing by zero shows as a tool error');
  const served = await page.textContent('.count');
  await page.waitForResponse((r) => r.url().includes('/ui/activity') && r.request().headers()['hx-request'] === 'true', { timeout: 5000 });
  check(true, `activity polls for new calls (${served.trim()})`);
  await shot('activity');

  // Routing playground.
  await page.click('nav >> text=playground');
  await page.fill('#rq', 'divide 10 by 4');
  await page.click('#route button');
  await page.waitForSelector('#ranked');
  const first = await page.textContent('#ranked tbody tr:first-child');
  check(first.includes('calculator_divide'), 'the playground ranks calculator_divide first for "divide 10 by 4"');
  check(await page.locator('#ranked thead th:has-text("Raw")').count() === 1 && await page.locator('#ranked .sig').count() > 0, 'it shows raw and final scores and the signals');
  await shot('playground');
  await page.fill('#rq', 'book a flight to lisbon');
  await page.click('#route button');
  await page.waitForSelector('text=abstained');
  check(await page.locator('.alert').count() > 0, 'a request nothing serves abstains with an alert');
  await shot('playground-abstain');

  check(errors.length === 0, 'no script errors in the pages: ' + errors.join('; '));
} catch (e) {
  await page.screenshot({ path: `${shots}/${mode}-failure.png`, fullPage: true });
  console.log(`failed on ${page.url()}; screenshot ${mode}-failure.png`);
  throw e;
} finally {
  await browser.close();
}
