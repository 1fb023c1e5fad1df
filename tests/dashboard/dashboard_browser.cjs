// Drives the scheduler's /ui in Debian's Chromium through playwright-core and asserts what a
// person sees there. Run by dashboard_browser_test.py, which starts the cluster and scheduler:
//
//   node dashboard_browser.cjs check URL EXPECT.json SCREENSHOT_DIR
//       the sections, keyboard navigation and accessibility against what the scheduler's API says
//   node dashboard_browser.cjs load URL SCREENSHOT_DIR
//       page load figures for a large cluster (`tessera bench dashboard --serve`)
//   node dashboard_browser.cjs signin URL REFUSED_TOKEN VIEWER_TOKEN SCREENSHOT_DIR
//       the token form of --dashboard-auth kubernetes (run by the real-cluster dashboard-auth e2e)
//
// PLAYWRIGHT_CORE names the installed playwright-core (build/dashboard-test/node_modules/...).
"use strict";

const fs = require("fs");
const path = require("path");
const { chromium } = require(process.env.PLAYWRIGHT_CORE || "playwright-core");

const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

async function launch() {
  const profile = fs.mkdtempSync(path.join(require("os").tmpdir(), "tessera-ui-profile-"));
  // Chromium as Debian ships it, with nothing that reaches the network on its own.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1400, height: 1000 },
  });
  return { context, close: async () => { await context.close(); fs.rmSync(profile, { recursive: true, force: true }); } };
}

function fail(message) {
  throw new Error(message);
}

async function loaded(page, section) {
  await page.waitForSelector(`body[data-loaded="${section}"]`, { timeout: 20000 });
}

// Every control has an accessible name; every image and chart a text alternative; every piece of
// text a contrast of 4.5:1 or more against the background it is drawn on (WCAG AA), computed from
// the page's computed styles.
async function accessibilityProblems(page) {
  return page.evaluate(() => {
    const problems = [];
    const visible = (el) => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
    const nameOf = (el) => {
      if (el.getAttribute("aria-label")) return el.getAttribute("aria-label");
      if (el.getAttribute("aria-labelledby")) {
        return el.getAttribute("aria-labelledby").split(" ").map((id) => document.getElementById(id)?.textContent || "").join(" ");
      }
      if (el.id && document.querySelector(`label[for="${el.id}"]`)) return document.querySelector(`label[for="${el.id}"]`).textContent;
      if (el.closest("label")) return el.closest("label").textContent;
      if (el.tagName === "IMG") return el.getAttribute("alt");
      return el.textContent;
    };
    for (const el of document.querySelectorAll("button, input, select, textarea, a[href]")) {
      if (visible(el) && !(nameOf(el) || "").trim()) problems.push(`${el.outerHTML.slice(0, 80)} has no accessible name`);
    }
    for (const el of document.querySelectorAll("img, svg, [role=img]")) {
      if (!visible(el) || el.closest("[aria-hidden=true]")) continue;
      if (el.tagName.toLowerCase() === "svg" && el.getAttribute("role") !== "img") problems.push("an svg without role=img");
      if (!(nameOf(el) || "").trim()) problems.push(`${el.outerHTML.slice(0, 80)} has no text alternative`);
    }
    const rgba = (text) => {
      const m = text.match(/rgba?\(([^)]+)\)/);
      if (!m) return [0, 0, 0, 0];
      const parts = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
      return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
    };
    const luminance = ([r, g, b]) => {
      const channel = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
    };
    const background = (el) => {
      for (let node = el; node; node = node.parentElement) {
        const colour = rgba(getComputedStyle(node).backgroundColor);
        if (colour[3] > 0) return colour;
      }
      return [255, 255, 255, 1];
    };
    let checked = 0;
    for (const el of document.querySelectorAll("body *")) {
      const ownText = [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
      if (!ownText || !visible(el) || el.closest(".hidden")) continue;
      const fg = luminance(rgba(getComputedStyle(el).color));
      const bg = luminance(background(el));
      const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
      checked += 1;
      if (ratio < 4.5) problems.push(`"${el.textContent.trim().slice(0, 40)}" has a contrast of ${ratio.toFixed(2)}:1`);
    }
    if (checked === 0) problems.push("no text was checked for contrast");
    return problems;
  });
}

async function textOf(page, selector) {
  return (await page.locator(selector).innerText()).replace(/\s+/g, " ");
}

function expectIncludes(where, text, wanted) {
  if (!text.includes(wanted)) fail(`${where} should show "${wanted}"; it shows: ${text.slice(0, 600)}`);
}

async function check(url, expect, shots) {
  const browser = await launch();
  try {
    const page = await browser.context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    page.on("console", (message) => { if (message.type() === "error") errors.push(message.text()); });
    page.on("response", (response) => { if (response.status() >= 400) errors.push(`${response.url()}: HTTP ${response.status()}`); });
    const outside = [];
    page.on("request", (request) => { if (!request.url().startsWith(new URL(url).origin)) outside.push(request.url()); });
    await page.goto(url);
    await loaded(page, "overview");
    const overview = await textOf(page, "#overview");
    expectIncludes("the overview", overview, `GPUs ${expect.gpus}`);
    expectIncludes("the overview", overview, `Pending workloads ${expect.pending.length}`);
    for (const row of expect.pending) expectIncludes("pending by reason", overview, row.reason);
    const bar = await page.locator("#allocation-bar [role=img]").getAttribute("aria-label");
    expectIncludes("the allocation bar's text", bar, `of ${expect.gpus} GPUs allocated`);
    await page.screenshot({ path: path.join(shots, "overview.png"), fullPage: true });
    const problems = { overview: await accessibilityProblems(page) };

    // The keyboard: Tab reaches the section navigation; Enter on a section opens it.
    await page.keyboard.press("Tab");
    const first = await page.evaluate(() => document.activeElement.dataset.section || document.activeElement.outerHTML);
    if (first !== "overview") fail(`the first Tab should reach the section navigation; it reached ${first}`);
    const sectionsByKeyboard = [];
    for (const section of ["queues", "nodes", "workloads"]) {
      await page.keyboard.press("Tab");  // focus stays on the button Enter pressed: Tab moves to the next section
      const focused = await page.evaluate(() => document.activeElement.dataset.section);
      if (focused !== section) fail(`Tab order: expected the ${section} button, got ${focused}`);
      await page.keyboard.press("Enter");
      await loaded(page, section);
      const current = await page.locator(`nav button[data-section="${section}"]`).getAttribute("aria-current");
      if (current !== "page") fail(`after Enter on ${section}, its button is not the current section`);
      if (await page.locator(`#${section}`).isHidden()) fail(`after Enter on ${section}, the section is hidden`);
      sectionsByKeyboard.push(section);
      await page.screenshot({ path: path.join(shots, `${section}.png`), fullPage: true });
      problems[section] = await accessibilityProblems(page);
      if (section === "queues") {
        for (const queue of expect.queues) {
          const row = await textOf(page, `#queue-table tbody tr:has(th:text-is("${queue.name}"))`);
          for (const figure of queue.figures) expectIncludes(`queue ${queue.name}'s row`, row, figure);
          const chart = await page.locator(`#queue-table tbody tr:has(th:text-is("${queue.name}")) svg`).getAttribute("aria-label");
          expectIncludes(`queue ${queue.name}'s chart`, chart, `Queue ${queue.name}:`);
        }
      }
      if (section === "nodes") {
        const card = page.locator(`article[aria-label="Node ${expect.fraction.node}"]`);
        const labels = await card.locator("[role=img]").evaluateAll((cells) => cells.map((c) => c.getAttribute("aria-label")));
        if (!labels.some((label) => label.includes(expect.fraction.text))) {
          fail(`node ${expect.fraction.node}'s GPU map should show "${expect.fraction.text}"; it shows ${JSON.stringify(labels)}`);
        }
        expectIncludes("the legend", await textOf(page, "#node-legend"), expect.fraction.queue);
      }
      if (section === "workloads") {
        const table = await textOf(page, "#pending-table");
        for (const row of expect.pending) {
          expectIncludes("the pending table", table, row.workload);
          expectIncludes("the pending table", table, row.reason);
          expectIncludes("the pending table", table, row.message.replace(/\s+/g, " "));
          if (row.estimate) expectIncludes("the pending table", table, row.estimate.replace(/\s+/g, " "));
        }
        expectIncludes("the estimate", table, expect.estimateShown);
        const evictions = await textOf(page, "#eviction-table");
        for (const text of expect.evictions) expectIncludes("recent evictions", evictions, text);
      }
    }
    const failing = Object.entries(problems).filter(([, list]) => list.length);
    if (failing.length) fail(`accessibility: ${JSON.stringify(Object.fromEntries(failing), null, 1)}`);
    if (errors.length) fail(`the page reported errors: ${errors.join("; ")}`);
    if (outside.length) fail(`the page asked for something the scheduler does not serve: ${outside.join(", ")}`);
    console.log(`dashboard in Chromium: overview, ${sectionsByKeyboard.join(", ")} opened with the keyboard; ` +
                `${expect.queues.length} queues, the fraction on ${expect.fraction.node}, ${expect.pending.length} pending ` +
                `workloads with their reasons and estimate, and the reclaimed guest shown; labels and contrast checked; screenshots in ${shots}`);
  } finally {
    await browser.close();
  }
}

// Page load at size: to the overview rendered, and each section after a click.
async function load(url, shots) {
  const browser = await launch();
  try {
    const page = await browser.context.newPage();
    const started = Date.now();
    await page.goto(url);
    await loaded(page, "overview");
    const figures = [`overview ${Date.now() - started} ms`];
    for (const section of ["queues", "nodes", "workloads"]) {
      const clicked = Date.now();
      await page.click(`nav button[data-section="${section}"]`);
      await loaded(page, section);
      figures.push(`${section} ${Date.now() - clicked} ms`);
      await page.screenshot({ path: path.join(shots, `large-${section}.png`) });
    }
    const sizes = await page.evaluate(() => performance.getEntriesByType("resource")
      .filter((entry) => entry.name.includes("/ui/api/"))
      .map((entry) => `${new URL(entry.name).pathname} ${entry.decodedBodySize} bytes (${entry.encodedBodySize} on the wire)`));
    console.log(`page load at size (Chromium, headless): ${figures.join(", ")}`);
    console.log(`fetched: ${[...new Set(sizes)].join(", ")}`);
  } finally {
    await browser.close();
  }
}

// --dashboard-auth kubernetes: the page asks for a token; one its user may not use is refused
// with the API's reason and the form stays; the viewer's token shows the data.
async function signIn(url, refusedToken, viewerToken, shots) {
  const browser = await launch();
  try {
    const page = await browser.context.newPage();
    await page.goto(url);
    const form = page.locator("#sign-in");
    await form.waitFor({ state: "visible", timeout: 20000 });
    const field = page.getByLabel("Kubernetes token");
    if (!(await field.evaluate((el) => el === document.activeElement))) fail("the token field does not have the focus");
    await page.screenshot({ path: path.join(shots, "sign-in.png") });
    await field.fill(refusedToken);
    await field.press("Enter");
    await page.waitForFunction(() => /may not list podgroups/.test(document.getElementById("sign-in-error").textContent),
                               null, { timeout: 20000 });
    if (!(await form.isVisible())) fail("the form went away after a refused token");
    await field.fill(viewerToken);
    await page.getByRole("button", { name: "Sign in" }).click();
    await loaded(page, "overview");
    if (await form.isVisible()) fail("the form is still shown after the viewer signed in");
    await page.click('nav button[data-section="queues"]');
    await loaded(page, "queues");
    await page.screenshot({ path: path.join(shots, "signed-in-queues.png"), fullPage: true });
    const queues = await textOf(page, "#queue-table");
    if (!queues.includes("team-a")) fail(`the signed-in viewer does not see queue team-a: ${queues}`);
    console.log("sign-in: the form asked for a token, refused one without rights with the API's reason, and showed the data to the viewer");
  } finally {
    await browser.close();
  }
}

async function main() {
  const [mode, url, ...rest] = process.argv.slice(2);
  if (mode === "check") await check(url, JSON.parse(fs.readFileSync(rest[0], "utf8")), rest[1]);
  else if (mode === "load") await load(url, rest[0]);
  else if (mode === "signin") await signIn(url, rest[0], rest[1], rest[2]);
  else fail("usage: dashboard_browser.cjs check URL EXPECT.json SHOTS | load URL SHOTS | signin URL REFUSED VIEWER SHOTS");
}

main().catch((error) => { console.error(`FAIL: ${error.message}`); process.exit(1); });
