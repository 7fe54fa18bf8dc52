// Drives the chat page like a person: types a message, sends it, waits for the outcome, reports what is
// rendered (JSON on stdout) and saves a screenshot.
// argv: <chromium> <page url> <scenario: answer|error|stop> <message> <screenshot.png>
import puppeteer from 'puppeteer-core';

const [executablePath, url, scenario, message, screenshot] = process.argv.slice(2);
const TIMEOUT = 30000;

const browser = await puppeteer.launch({
  executablePath,
  headless: true,
  // --no-sandbox: the tests may run as root in a container, where Chromium's sandbox cannot start.
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
});
const consoleErrors = [];
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(TIMEOUT);
  page.on('pageerror', (error) => consoleErrors.push(String(error)));
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  await page.setViewport({ width: 900, height: 760, deviceScaleFactor: 1 });
  await page.goto(url, { waitUntil: 'networkidle0' });
  await page.waitForSelector('[data-testid=input]');
  await page.type('[data-testid=input]', message);
  await page.click('[data-testid=send]');

  if (scenario === 'answer') {
    await page.waitForFunction(
      () => document.querySelector('[data-testid=status]')?.textContent === 'ready'
        && document.querySelectorAll('[data-testid=message-assistant] [data-testid=text]').length > 0,
    );
  } else if (scenario === 'error') {
    await page.waitForSelector('[data-testid=error]');
  } else if (scenario === 'stop') {
    await page.waitForSelector('[data-testid=tool][data-state=input-available]');
    await page.click('[data-testid=stop]');
    await page.waitForSelector('[data-testid=stopped]');
    await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.textContent === 'ready');
  } else {
    throw new Error(`unknown scenario ${scenario}`);
  }

  const rendered = await page.evaluate(() => {
    const text = (el, sel) => el.querySelector(sel)?.textContent ?? null;
    const assistant = [...document.querySelectorAll('[data-testid=message-assistant]')].at(-1);
    return {
      status: text(document, '[data-testid=status]'),
      orchestrator: text(document, '[data-testid=orchestrator]'),
      user: [...document.querySelectorAll('[data-testid=message-user]')].map((m) => m.textContent),
      texts: assistant ? [...assistant.querySelectorAll('[data-testid=text]')].map((e) => e.textContent) : [],
      reasoning: assistant ? [...assistant.querySelectorAll('[data-testid=reasoning]')].map((e) => e.textContent) : [],
      tools: assistant ? [...assistant.querySelectorAll('[data-testid=tool]')].map((t) => ({
        name: t.dataset.toolName,
        state: t.dataset.state,
        input: text(t, '[data-testid=tool-input]'),
        output: text(t, '[data-testid=tool-output]'),
      })) : [],
      error: text(document, '[data-testid=error]'),
      stopped: text(document, '[data-testid=stopped]'),
    };
  });
  await page.screenshot({ path: screenshot, fullPage: true });
  process.stdout.write(JSON.stringify({ ...rendered, consoleErrors }));
} finally {
  await browser.close();
}
