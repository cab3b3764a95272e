// Lighthouse (npm, pinned by the Makefile's bench-pages-setup) on the demo's pages, each in a fresh
// Chromium profile with a cold HTTP cache: the tracking page as its recipient opens it, the console's
// day board and the courier app's run signed in first (the session kept, the cache cleared). Then
// the tracking page on Lighthouse's 3G profile (mobileRegular3G, DevTools throttling), with the
// time the arrival estimate is painted (its Element Timing, `elementtiming="eta"`).
//
//   node bench/pages/lighthouse.mjs '{"base": "http://127.0.0.1:8080", "tracking": "/t/…",
//                                     "owner": ["owner@demo.am", "…"], "courier": ["courier1@demo.am", "…"]}'
// prints one JSON line per run. LIGHTHOUSE_PREFIX names the npm prefix lighthouse is installed in.
import {writeFileSync} from "node:fs";
import {pathToFileURL} from "node:url";

const PREFIX = process.env.LIGHTHOUSE_PREFIX + "/node_modules/";
const {default: lighthouse} = await import(pathToFileURL(PREFIX + "lighthouse/core/index.js"));
// Lighthouse's own puppeteer-core (a page from another copy would not be one it can drive).
const {default: puppeteer} = await import(pathToFileURL(PREFIX + "puppeteer-core/lib/esm/puppeteer/puppeteer-core.js"));

const args = JSON.parse(process.argv[2]);
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
// Lighthouse's constants.throttling.mobileRegular3G, applied by DevTools (not simulated).
const REGULAR_3G = {rttMs: 300, throughputKbps: 700, requestLatencyMs: 300 * 3.75,
                    downloadThroughputKbps: 700 * 0.9, uploadThroughputKbps: 700 * 0.9, cpuSlowdownMultiplier: 4};

async function signIn(page, path, [email, password], ready) {
  await page.goto(args.base + path);
  await page.waitForSelector("body[data-view='signin']");
  await page.type("#signin-email", email);
  await page.type("#signin-password", password);
  await page.click("#signin-submit");
  await page.waitForSelector(ready, {timeout: 30000});
}

async function run(name, path, prepare, flags) {
  const browser = await puppeteer.launch({executablePath: CHROMIUM, headless: true,
                                          args: ["--no-sandbox", "--disable-gpu", "--no-first-run"]});
  try {
    const page = await browser.newPage();
    if (prepare) { await prepare(page); }
    const cdp = await page.createCDPSession();
    await cdp.send("Network.clearBrowserCache");  // cold: nothing cached, the session kept
    await page.goto("about:blank");
    const result = await lighthouse(args.base + path, Object.assign({
      output: "json", logLevel: "error", disableStorageReset: true,
      onlyCategories: ["performance", "accessibility"],
    }, flags || {}), undefined, page);
    const lhr = result.lhr;
    if (args.save) { writeFileSync(`${args.save}/${name.replace(/\W+/g, "-")}-${Date.now()}.json`, JSON.stringify(lhr)); }
    const metric = (id) => (lhr.audits[id] && lhr.audits[id].numericValue !== undefined ? Math.round(lhr.audits[id].numericValue) : null);
    const line = {
      name: name,
      performance: Math.round(lhr.categories.performance.score * 100),
      accessibility: Math.round(lhr.categories.accessibility.score * 100),
      fcpMs: metric("first-contentful-paint"), lcpMs: metric("largest-contentful-paint"),
      tbtMs: metric("total-blocking-time"), cls: lhr.audits["cumulative-layout-shift"].numericValue,
      textCompression: lhr.audits["uses-text-compression"].score,
      renderBlocking: (lhr.audits["render-blocking-resources"].details || {items: []}).items.length,
      runtimeError: lhr.runtimeError ? lhr.runtimeError.code : null,
      // The accessibility audits that failed (what keeps the score under 100).
      a11yFailed: lhr.categories.accessibility.auditRefs.map((ref) => lhr.audits[ref.id])
        .filter((audit) => audit && audit.score === 0).map((audit) => audit.id),
    };
    console.log(JSON.stringify(line));
  } finally {
    await browser.close();
  }
}

// The tracking page, cold, under the same 3G conditions applied by DevTools (network and 4x CPU):
// when is the arrival estimate painted (its Element Timing, from the navigation's start)?
async function etaOn3G() {
  const browser = await puppeteer.launch({executablePath: CHROMIUM, headless: true,
                                          args: ["--no-sandbox", "--disable-gpu", "--no-first-run"]});
  try {
    const page = await browser.newPage();
    await page.setViewport({width: 412, height: 823, deviceScaleFactor: 1.75, isMobile: true, hasTouch: true});
    const cdp = await page.createCDPSession();
    await cdp.send("Network.enable");
    await cdp.send("Network.clearBrowserCache");
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false, latency: REGULAR_3G.requestLatencyMs,
      downloadThroughput: REGULAR_3G.downloadThroughputKbps * 1024 / 8,
      uploadThroughput: REGULAR_3G.uploadThroughputKbps * 1024 / 8,
    });
    await cdp.send("Emulation.setCPUThrottlingRate", {rate: REGULAR_3G.cpuSlowdownMultiplier});
    await page.goto(args.base + args.tracking, {waitUntil: "domcontentloaded", timeout: 120000});
    const painted = await page.evaluate(() => new Promise((resolve) => {
      new PerformanceObserver((list) => {
        const eta = list.getEntries().find((e) => e.identifier === "eta");
        if (eta) { resolve([Math.round(eta.renderTime || eta.loadTime), eta.element ? eta.element.textContent : ""]); }
      }).observe({type: "element", buffered: true});
      setTimeout(() => resolve([null, ""]), 30000);
    }));
    console.log(JSON.stringify({name: "eta on 3G", etaPaintedMs: painted[0], etaText: painted[1]}));
  } finally {
    await browser.close();
  }
}

// args.only: the pages to run (tracking, board, courier, signin, tracking3g, eta3g); empty: all.
const wanted = (name) => !args.only || args.only.length === 0 || args.only.includes(name);
if (wanted("tracking")) { await run("tracking page", args.tracking); }
if (wanted("board")) { await run("day board", "/console/", (page) => signIn(page, "/console/", args.owner, "body[data-stream='live']")); }
if (wanted("courier")) { await run("courier run", "/app/", (page) => signIn(page, "/app/", args.courier, "body[data-view='app']")); }
if (wanted("signin")) { await run("console sign-in", "/console/"); }
if (wanted("tracking3g")) { await run("tracking page 3G", args.tracking, null, {throttlingMethod: "devtools", throttling: REGULAR_3G}); }
if (wanted("eta3g")) { await etaOn3G(); }
