// Drives the console's Approvals page in Chromium (playwright-core): logs
// in with the token, waits for the two calls the Go test made to be
// listed, approves APPROVE_TOOL's and declines DECLINE_TOOL's, and saves
// a screenshot. Run by the Go test TestApprovalsInTheConsoleBrowser; it
// exits non-zero on the first failed check.
//
// Environment: CONSOLE_URL (http://host:port/ui), CONSOLE_TOKEN, SHOTS
// (a directory), CHROMIUM (the browser), APPROVE_TOOL, DECLINE_TOOL.
import { chromium } from 'playwright-core';

const base = process.env.CONSOLE_URL;
const approveTool = process.env.APPROVE_TOOL;
const declineTool = process.env.DECLINE_TOOL;

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
page.setDefaultTimeout(20000);
try {
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${base}/approvals`);
  await page.fill('#token', process.env.CONSOLE_TOKEN);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/ui\/upstreams$/);
  await page.click('nav >> text=approvals');
  await page.waitForSelector('h1:has-text("Approvals")');
  // The live list refreshes itself until both calls wait.
  await page.waitForSelector(`#approvals tr[data-tool="${approveTool}"]`);
  await page.waitForSelector(`#approvals tr[data-tool="${declineTool}"]`);
  const row = page.locator(`#approvals tr[data-tool="${approveTool}"]`);
  const text = await row.textContent();
  check(text.includes('up_wipe') && text.includes('/data'), `the row names the tool, its server and its arguments: ${text}`);
  check(!text.includes('sk-live'), 'the summary redacts the key');
  await page.screenshot({ path: `${process.env.SHOTS}/approvals.png`, fullPage: true });
  await row.locator('button[value=approve]').click();
  await page.waitForURL(/\/ui\/approvals$/);
  await page.waitForFunction((t) => !document.querySelector(`#approvals tr[data-tool="${t}"]`), approveTool);
  check(true, `approving ${approveTool} takes it off the list`);
  await page.locator(`#approvals tr[data-tool="${declineTool}"] button[value=decline]`).click();
  await page.waitForURL(/\/ui\/approvals$/);
  await page.waitForSelector('text=No call waits for approval.');
  check(true, `declining ${declineTool} empties the list`);
  check(errors.length === 0, 'no script errors: ' + errors.join('; '));
} finally {
  await browser.close();
}
