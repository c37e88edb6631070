// Drives nodmix's web chat page in headless Chromium (Debian's package) with playwright-core, and
// prints what it saw as JSON for the Go test to check.
//
//   node webchat.mjs chat  BASE_URL SHOTS_DIR   the chat, the picker, the token economy
//   node webchat.mjs token BASE_URL TOKEN       a gateway with a bearer token
//   node webchat.mjs pages BASE_URL             a sidebar of more sessions than one page
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [mode, base, arg] = process.argv.slice(2);
const TIMEOUT = 20000;

async function launch() {
  const profile = mkdtempSync(join(tmpdir(), 'nodmix-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 860 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  ctx.setDefaultTimeout(TIMEOUT);
  return { ctx, close: async () => { await ctx.close(); rmSync(profile, { recursive: true, force: true }); } };
}

// Every request the page makes must go to the gateway: nothing from a CDN.
function watchRequests(page, out) {
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(base) && !u.startsWith('data:')) out.foreign.push(u);
  });
  page.on('console', (m) => {
    if (m.type() === 'error') out.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => out.consoleErrors.push(String(e)));
}

async function ready(page) {
  await page.waitForSelector('body[data-ready="true"]');
}

async function pickerState(page) {
  const sel = page.getByLabel('Thinking level');
  return {
    options: await sel.locator('option').allTextContents(),
    selected: await sel.evaluate((s) => s.options[s.selectedIndex].textContent),
  };
}

// send types a message, sends it and waits for the answer that ends the turn.
async function send(page, text, answerIncludes) {
  const before = await page.locator('[data-role="assistant"]').count();
  await page.getByLabel('Message').fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('[data-role="assistant"]').nth(before).waitFor();
  await page.waitForFunction(([n, want]) => {
    const all = document.querySelectorAll('[data-role="assistant"]');
    return Array.from(all).slice(n).some((e) => e.textContent.includes(want)) && !document.querySelector('.streaming');
  }, [before, answerIncludes]);
  await page.waitForFunction(() => !document.querySelector('#send').disabled);
}

async function chat() {
  const out = { foreign: [], consoleErrors: [] };
  const { ctx, close } = await launch();
  const page = ctx.pages()[0] || (await ctx.newPage());
  watchRequests(page, out);
  const resp = await page.goto(base + '/');
  out.csp = resp.headers()['content-security-policy'] || '';
  await ready(page);
  out.key = await page.locator('#session-title').textContent();
  out.pickerFirst = await pickerState(page);

  // Count how often the answer's text changes while it streams: more than once means the page
  // renders the SSE deltas as they come.
  await page.evaluate(() => {
    window.__mutations = 0;
    new MutationObserver((ms) => {
      for (const m of ms) {
        const t = m.target.nodeType === 3 ? m.target.parentElement : m.target;
        if (t && t.closest && t.closest('[data-role="assistant"]')) window.__mutations++;
      }
    }).observe(document.querySelector('#transcript'), { subtree: true, childList: true, characterData: true });
  });

  await send(page, '/verbose on', 'Verbose logging enabled.');
  await send(page, 'search echo a message', 'tool_search returned:');
  await send(page, 'tool_call {"id":"mcp:everything:echo","args":{"message":"hi from the page"}}', 'tool_call returned:');
  // A noisy command through Tool Search: tokenjuice compacts its output.
  await send(page, 'tool_call {"id":"nodmix:core:exec","args":{"command":["seq","1","3000"]}}', 'tool_call returned:');
  out.mutations = await page.evaluate(() => window.__mutations);
  out.tools = await page.locator('[data-role="tool"]').evaluateAll((els) =>
    els.map((e) => ({ text: e.querySelector('.tool-summary').textContent, state: e.dataset.state })));
  out.answers = await page.locator('[data-role="assistant"]').allTextContents();

  // Picking an override writes it at once.
  const patched = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().includes('/v1/sessions/'));
  await page.getByLabel('Thinking level').selectOption({ label: 'Override: high' });
  out.patchStatus = (await patched).status();
  // The page shows the PATCH's answer once it has read it, a moment after the response arrives:
  // wait for it (the Go test checks what shows).
  await page.waitForFunction(() => document.querySelector('#thinking').value === 'high', null, { timeout: 5000 }).catch(() => {});
  out.pickerAfterPick = await pickerState(page);
  const stored = await page.request.get(base + '/v1/sessions/' + encodeURIComponent(out.key));
  out.storedAfterPick = (await stored.json()).overrides;

  await page.reload();
  await ready(page);
  out.keyAfterReload = await page.locator('#session-title').textContent();
  out.pickerAfterReload = await pickerState(page);
  out.transcriptAfterReload = await page.locator('#transcript > li').count();

  await send(page, '/think low', 'Thinking level set to low.');
  out.pickerAfterDirective = await pickerState(page);
  out.lastAnswer = await page.locator('[data-role="assistant"]').last().textContent();

  // A row read before a pick and answered after it must not show over the pick. The read that
  // follows the next turn is answered with the row as it was then, held until the pick shows.
  const isRow = (u) => u.pathname === '/v1/sessions/' + encodeURIComponent(out.key);
  const held = [];
  await page.route(isRow, async (route) => {
    if (route.request().method() !== 'GET') return route.continue();
    const response = await route.fetch(); // the row before the pick
    held.push(() => route.fulfill({ response }));
  });
  await send(page, '/think low', 'Thinking level set to low.');
  for (let i = 0; held.length === 0 && i < 100; i++) await new Promise((r) => setTimeout(r, 50));
  out.heldRows = held.length;
  const picked = page.waitForResponse((r) => r.request().method() === 'PATCH' && isRow(new URL(r.url())));
  await page.getByLabel('Thinking level').selectOption({ label: 'Override: high' });
  await picked;
  await page.waitForFunction(() => document.querySelector('#thinking').value === 'high', null, { timeout: 5000 }).catch(() => {});
  const stale = page.waitForResponse((r) => r.request().method() === 'GET' && isRow(new URL(r.url())));
  await Promise.all(held.map((f) => f()));
  await stale;
  await page.waitForTimeout(200); // the page's handler of the stale row runs
  out.pickerAfterStaleRow = await pickerState(page);
  await page.unroute(isRow);

  await page.setViewportSize({ width: 1280, height: 1180 }); // room for the tool lines
  await page.screenshot({ path: join(arg, 'webchat.png') });
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.getByRole('button', { name: 'Token economy' }).click();
  await page.locator('#economy svg').waitFor();
  out.economy = await page.locator('#economy-numbers').innerText();
  await page.locator('#economy').screenshot({ path: join(arg, 'webchat-economy.png') });

  // A binary-profile model: the picker shows on.
  await page.getByLabel('Model').selectOption('zai/glm-4.6');
  await page.waitForFunction(() => Array.from(document.querySelectorAll('#thinking option')).some((o) => o.textContent === 'Override: on'));
  out.pickerBinary = await pickerState(page);

  // A new session, then deleting it.
  await page.getByRole('button', { name: 'New session' }).click();
  await page.waitForFunction((k) => document.querySelector('#session-title').textContent !== k, out.key);
  out.newKey = await page.locator('#session-title').textContent();
  out.pickerNew = await pickerState(page);

  // While a turn streams, the page stays on its session: the turn is held back at the network
  // and the first session is clicked.
  let release;
  const gate = new Promise((r) => (release = r));
  const isTurn = (u) => u.pathname === '/v1/chat/completions';
  await page.route(isTurn, async (route) => {
    await gate;
    await route.continue();
  });
  await page.getByLabel('Message').fill('hello while held');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.waitForFunction(() => document.querySelector('#send').disabled);
  await page.locator('#sessions .session-open[data-key="' + out.key + '"]').click();
  await page.locator('#notice').waitFor({ state: 'visible' });
  out.noticeWhileBusy = await page.locator('#notice').textContent();
  out.titleWhileBusy = await page.locator('#session-title').textContent();
  release();
  await page.waitForFunction(() => !document.querySelector('#send').disabled);
  out.answerAfterHold = await page.locator('[data-role="assistant"]').last().textContent();
  await page.unroute(isTurn);
  out.sessionsBeforeDelete = await page.locator('#sessions li').count();
  await page.getByRole('button', { name: 'Delete session ' + out.newKey }).click();
  await page.waitForFunction((n) => document.querySelectorAll('#sessions li').length === n - 1, out.sessionsBeforeDelete);
  out.sessionsAfterDelete = await page.locator('#sessions li').count();
  // The list is redrawn before the next session opens: wait for the title to move on.
  await page.waitForFunction((k) => document.querySelector('#session-title').textContent !== k, out.newKey);
  out.keyAfterDelete = await page.locator('#session-title').textContent();
  await close();
  return out;
}

async function token() {
  const out = { foreign: [], consoleErrors: [] };
  const { ctx, close } = await launch();
  const page = ctx.pages()[0] || (await ctx.newPage());
  watchRequests(page, out);
  const resp = await page.goto(base + '/');
  out.pageStatus = resp.status();
  const dialog = page.getByRole('dialog', { name: 'Bearer token' });
  await dialog.waitFor();
  out.askedFirst = true;
  await page.getByLabel('Token', { exact: true }).fill('wrong-token');
  await page.getByRole('button', { name: 'Connect' }).click();
  await page.locator('#token-error').waitFor({ state: 'visible' });
  out.refusedShown = true;
  await page.getByLabel('Token', { exact: true }).fill(arg);
  await page.getByRole('button', { name: 'Connect' }).click();
  await ready(page);
  out.stored = await page.evaluate(() => sessionStorage.getItem('nodmix.token') !== null);
  await page.reload();
  await ready(page);
  out.askedAfterReload = await dialog.isVisible();
  await send(page, 'hello through the token', 'You said: hello through the token');
  out.answers = await page.locator('[data-role="assistant"]').allTextContents();
  out.key = await page.locator('#session-title').textContent();
  // The consoles' 401s are the page learning that it needs the token.
  out.consoleErrors = out.consoleErrors.filter((e) => !e.includes('401'));
  await close();
  return out;
}

// The sidebar of a gateway keeping 250 sessions: a page of 100, then "More sessions" twice;
// before the last click two sessions are updated through the API, one already listed and one
// of the last page, which move to the front.
async function pages() {
  const out = { foreign: [], consoleErrors: [] };
  const { ctx, close } = await launch();
  const page = ctx.pages()[0] || (await ctx.newPage());
  watchRequests(page, out);
  await page.goto(base + '/');
  await ready(page);
  const listed = () => page.locator('#sessions .session-open[data-key]').evaluateAll((bs) => bs.map((b) => b.dataset.key));
  const more = page.getByRole('button', { name: 'More sessions' });
  const waitRows = (n) => page.waitForFunction((n) => document.querySelectorAll('#sessions .session-open[data-key]').length >= n, n);
  out.first = await listed();
  out.moreAfterFirst = await more.isVisible();
  await more.click();
  await waitRows(200);
  await page.locator('#more-sessions:not([disabled])').waitFor();
  out.second = await listed();
  const all = await page.evaluate(async () => (await (await fetch('/v1/sessions?limit=1000')).json()).data.map((r) => r.key));
  out.patched = [all[10], all[230]];
  for (const k of out.patched) {
    const r = await page.evaluate(async (k) => (await fetch('/v1/sessions/' + encodeURIComponent(k), {
      method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: '{"verbose":"on"}' })).status, k);
    if (r !== 200) throw new Error('PATCH ' + k + ': ' + r);
  }
  await more.click();
  await more.waitFor({ state: 'detached' });
  out.third = await listed();
  await close();
  return out;
}

const run = { chat, token, pages }[mode];
if (!run) {
  console.error('usage: webchat.mjs chat|token|pages BASE_URL ARG');
  process.exit(2);
}
run().then(
  (out) => process.stdout.write(JSON.stringify(out) + '\n'),
  (err) => {
    console.error(err && err.stack ? err.stack : String(err));
    process.exit(1);
  },
);
