// The dispatcher console's shell: sign-in, company switcher, language, sign-out, and the realtime
// stream that feeds the board, the couriers and the map. A client of the JSON API only: every rule
// (who may do what, which move is allowed) is the API's, and its Problem answers are shown as given.
import {Api, ApiError} from "/static/js/api.js";
import {openEventStream} from "/static/js/events.js";
import {applyTexts, initialLanguage, rememberLanguage} from "/static/js/i18n.js";
import {TEXTS} from "/console/texts.js";
import "/console/texts-day.js";
import "/console/texts-money.js";
import {Board} from "/console/board.js";
import {Fleet} from "/console/fleet.js";
import {Planner} from "/console/plan.js";
import {Admin} from "/console/admin.js";
import {Reports} from "/console/reports.js";
import {Bulk} from "/console/bulk.js";
import {Handover} from "/console/handover.js";
import {Pins} from "/console/pins.js";
import {Integrations} from "/console/integrations.js";
import {Money} from "/console/money.js";

const $ = (id) => document.getElementById(id);

const ctx = {
  lang: initialLanguage(),
  get T() { return TEXTS[this.lang]; },
  session: null,
  toast(text) {
    const toast = $("toast");
    toast.textContent = text;
    toast.hidden = false;
    clearTimeout(this._toastTimer);
    this._toastTimer = setTimeout(() => { toast.hidden = true; }, 4000);
  },
  // Show an API failure in the page's words: offline, or the Problem's own title/detail.
  explain(error) {
    if (error && error.offline) { return this.T.offline; }
    if (error instanceof ApiError) {
      const fields = (error.problem.errors || []).map((e) => (e.field || e.loc || "") + ": " + (e.message || e.msg || "")).join("; ");
      return this.T.failed + (error.problem.detail || error.problem.title || error.status) + (fields ? " (" + fields + ")" : "");
    }
    return this.T.failed + String(error);
  },
  fail(error) { console.error(error); this.toast(this.explain(error)); },
};

// Refresh tokens stay in this tab only (sessionStorage); the /login page verifying an emailed link
// leaves its session under the same key, and the first rotation replaces it by the refresh token alone.
const SESSION_KEY = "appliance.session";
const api = new Api({
  storage: sessionStorage,
  key: SESSION_KEY,
  onSession: (session) => { showSession(session); },
  onSignedOut: () => { stopWorkspace(); showSignIn(); },
});
ctx.api = api;

const board = new Board(ctx);
const fleet = new Fleet(ctx);
const planner = new Planner(ctx, board, fleet);
const admin = new Admin(ctx);
const reports = new Reports(ctx);
ctx.bulk = new Bulk(ctx, board);
ctx.handover = new Handover(ctx, board);
ctx.board = board; ctx.fleet = fleet; ctx.planner = planner; ctx.admin = admin; ctx.reports = reports;
ctx.pins = new Pins(ctx, board);  // imported drafts that need a pin (issue 46)
const integrations = new Integrations(ctx);  // keys and webhooks, owners only (issue 46)
const money = new Money(ctx);  // fee zones and shop statements (issue 47)
let stream = null;
let workspaceCompany = null;

function applyLanguage() {
  applyTexts(document, ctx.T, ctx.lang);
  document.title = ctx.T.title;
  if (ctx.session) { $("company-name").textContent = ctx.session.company.name; }
  showStreamState(document.body.dataset.stream);
  renderSwitcher();
  board.render(); fleet.render(); planner.render(); admin.render(); reports.render(); integrations.render(); money.render();
}

// Views: the day (board, map, plan, couriers), cash, team, company and reports.
let view = "day";
function showView(name) {
  view = name;
  document.body.dataset.consoleView = name;
  document.querySelectorAll("[data-view-tab]").forEach((b) => b.setAttribute("aria-current", b.dataset.viewTab === name ? "page" : "false"));
  $("main").hidden = !ctx.session || name !== "day";
  document.querySelectorAll("[data-view-panel]").forEach((panel) => { panel.hidden = !ctx.session || panel.dataset.viewPanel !== name; });
  if (name !== "integrations") { integrations.hide(); }
  if (name === "day") { if (fleet.map) { fleet.map.resize(); } } else if (name === "reports") { reports.show(); } else if (name === "integrations") { integrations.show(); } else if (name === "money") { money.show(); } else { admin.show(name); }
}
document.querySelectorAll("[data-view-tab]").forEach((b) => b.addEventListener("click", () => showView(b.dataset.viewTab)));

document.querySelectorAll("[data-lang]").forEach((button) => {
  button.addEventListener("click", () => {
    ctx.lang = button.dataset.lang;
    rememberLanguage(ctx.lang);
    applyLanguage();
    if (ctx.session) {  // remembered for the user, on every device (PATCH /me)
      api.patch("/me", {language: ctx.lang}).then(() => { ctx.session.user.language = ctx.lang; }).catch((e) => ctx.fail(e));
    }
  });
});

function showSignIn(message) {
  ctx.session = null;
  document.body.dataset.view = "signin";
  $("main").hidden = true;
  document.querySelectorAll("[data-view-panel]").forEach((panel) => { panel.hidden = true; });
  $("views").hidden = true;
  $("signin").hidden = false;
  $("switcher").hidden = true;
  $("sign-out").hidden = true;
  $("user-name").textContent = "";
  $("stream-state").textContent = "";
  $("company-name").textContent = ctx.T.title;
  $("signin-message").textContent = message || "";
  $("signin-email").focus();
}

function showSession(session) {
  const first = !ctx.session || ctx.session.user.id !== session.user.id;
  ctx.session = session;
  if (first && session.user.language && TEXTS[session.user.language]) { ctx.lang = session.user.language; rememberLanguage(ctx.lang); }
  document.documentElement.style.setProperty("--brand", session.company.brandColor || "#1F6FEB");
  $("company-name").textContent = session.company.name;
  $("user-name").textContent = session.user.displayName;
  $("sign-out").hidden = false;
  renderSwitcher();
  if (session.role === "courier") {
    stopWorkspace();
    showSignIn();
    $("signin-message").textContent = ctx.T.courierHere + location.origin + "/app/";
    $("sign-out").hidden = false;
    return;
  }
  $("signin").hidden = true;
  $("views").hidden = false;
  document.body.dataset.view = "workspace";
  const owner = session.role === "owner";
  document.querySelector("[data-view-tab='integrations']").hidden = !owner;  // keys and webhooks: owners only
  showView(workspaceCompany === session.company.id && (owner || view !== "integrations") ? view : "day");
  document.body.dataset.company = session.company.id;
  if (workspaceCompany !== session.company.id) { startWorkspace(); }
  applyLanguage();
}

async function startWorkspace() {
  stopWorkspace();
  workspaceCompany = ctx.session.company.id;
  board.reset(); fleet.reset(); planner.reset();
  try {
    // Seed the stream at the newest event first, so that nothing between the loads and the stream is lost.
    const {cursor} = await api.get("/events/latest-cursor");
    await Promise.all([board.load(), fleet.load()]);
    stream = openEventStream(api, {
      cursor: cursor,
      onEvent: (event) => { board.onEvent(event); fleet.onEvent(event); admin.onEvent(event); },
      onState: showStreamState,
    });
  } catch (error) { ctx.fail(error); }
}

// The user's active companies, with their role there, in the console's language.
function renderSwitcher() {
  const session = ctx.session;
  const select = $("company-switch");
  select.replaceChildren();
  if (!session) { return; }
  session.memberships.filter((m) => m.status === "active").forEach((m) => {
    const option = document.createElement("option");
    option.value = m.companyId;
    option.textContent = m.companyName + " · " + (ctx.T["role_" + m.role] || m.role);
    option.selected = m.companyId === session.company.id;
    select.append(option);
  });
  $("switcher").hidden = select.options.length < 2;
}

function showStreamState(state) {
  const element = $("stream-state");
  element.dataset.state = state || "";
  element.textContent = state === "live" ? ctx.T.live : state ? ctx.T.waiting : "";
  if (state) { document.body.dataset.stream = state; } else { delete document.body.dataset.stream; }
}

function stopWorkspace() {
  if (stream) { stream.close(); stream = null; }
  showStreamState(null);
  workspaceCompany = null;
  board.reset(); fleet.reset(); planner.reset();
}

$("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const message = $("signin-message");
  message.textContent = "";
  $("signin-submit").disabled = true;
  try {
    await api.signIn($("signin-email").value.trim(), $("signin-password").value);
    $("signin-password").value = "";
    await acceptInvite();
    if (document.body.dataset.view === "workspace") { $("company-name").focus(); }  // the page's first heading
  } catch (error) {
    message.textContent = error.status === 401 ? ctx.T.wrongPassword : error.status === 403 ? ctx.T.noCompany : ctx.explain(error);
  } finally { $("signin-submit").disabled = false; }
});

$("signin-magic").addEventListener("click", async () => {
  const email = $("signin-email").value.trim();
  if (!email) { $("signin-email").reportValidity(); return; }
  try {
    const response = await fetch("/auth/magic-link", {method: "POST", headers: {"Content-Type": "application/json"},
                                                      body: JSON.stringify({email: email})});
    $("signin-message").textContent = response.ok ? ctx.T.magicSent : ctx.explain(new ApiError(response.status, await response.json().catch(() => null)));
  } catch (error) { $("signin-message").textContent = ctx.explain(error); }
});

$("company-switch").addEventListener("change", async (event) => {
  try { await api.switchCompany(event.target.value); } catch (error) { ctx.fail(error); }
});

$("sign-out").addEventListener("click", () => { api.signOut(); });

// An invite for an existing account: /invite/… sends the person here with #invite=TOKEN (a
// fragment never reaches the server or a referrer). Once signed in, the console shows which company
// the invite is for and asks; only "Join" accepts it with the bearer token (the new company's
// session then replaces this one). A link opened in a signed-in tab joins nothing by itself.
const INVITE_KEY = "appliance.invite";

function askToJoin(preview) {
  const T = ctx.T;
  const values = {company: preview.company.name, role: T["role_" + preview.role] || preview.role,
                  inviter: preview.invitedBy && preview.invitedBy.name};
  const text = values.inviter ? T.inviteAsk : T.inviteAskNoInviter;
  $("invite-ask").textContent = text.replace(/\{(\w+)\}/g, (_, key) => values[key]);
  const dialog = $("invite-dialog");
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "join"), {once: true});
  });
}

async function acceptInvite() {
  const token = sessionStorage.getItem(INVITE_KEY);
  if (!token || !ctx.session) { return; }
  sessionStorage.removeItem(INVITE_KEY);
  try {
    const preview = await api.get("/auth/invite/" + encodeURIComponent(token));
    if (!(await askToJoin(preview))) { return; }
    const session = await api.post("/auth/invite/accept", {token: token});
    api.adopt(session);
    ctx.toast(ctx.T.joined + session.company.name);
  } catch (error) { ctx.toast(ctx.T.inviteFailed + ctx.explain(error)); }
}

async function boot() {
  const invite = new URLSearchParams(location.hash.slice(1)).get("invite");
  if (invite) { sessionStorage.setItem(INVITE_KEY, invite); history.replaceState(null, "", location.pathname + location.search); }
  applyLanguage();
  // A session left by /login (an emailed link) or by /invite (an accepted invite) in this tab.
  let handed = null;
  try { handed = JSON.parse(sessionStorage.getItem(SESSION_KEY) || "null"); } catch (e) { handed = null; }
  if (handed && handed.accessToken && handed.user) { api.adopt(handed); return; }
  try {
    if (!(await api.resume())) { showSignIn(); return; }
    await acceptInvite();
  } catch (error) { showSignIn(ctx.explain(error)); }
}
boot();
// For tests and the curious; the API client (and its tokens) stays inside the module.
window.dispatcherConsole = {board: board, fleet: fleet, planner: planner, get lang() { return ctx.lang; }};
