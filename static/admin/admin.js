// The engine administrator's console: sign in (password and authenticator code), then findings,
// approvals, treasury, operators, sweeps and the audit log from /admin/api/*. Every change sends
// X-Admin-Request (the API refuses a change without it). English only; every string is in TEXT.
const TEXT = {
  signedOut: "Signed out.",
  loading: "Loading…",
  loaded: "Up to date.",
  failed: "The request failed: ",
  none: "Nothing here.",
  acknowledge: "Acknowledge",
  acknowledged: "Finding acknowledged.",
  approve: "Approve",
  reject: "Reject",
  approved: "Payout approved.",
  rejected: "Payout rejected.",
  pause: "Pause",
  resume: "Resume",
  paused: "Operator paused.",
  resumed: "Operator resumed.",
  running: "running",
  pausedState: "paused",
  chainOk: (n, head) => `The chain of ${n} entries verifies; head ${head}.`,
  chainBroken: (id, why) => `The audit chain is BROKEN at entry ${id}: it ${why}.`,
  critical: "critical",
  entries: "Ledger entries",
  entriesOf: (id) => `Ledger entries of ${id} (newest 50, its balance)`,
  allowList: (n) => `${n} allowed destination${n === 1 ? "" : "s"}`,
  anyDestination: "any destination",
  notScheduled: "Backups are not scheduled on this deployment (backup_every_hours; docs/operations.md).",
  scheduled: (hours, last) => `Every ${hours} h; last run ${last || "none yet"}.`,
  drillPassed: "restores",
  drillFailed: "FAILED",
  adopt: "Adopt for payout",
  payoutIdLabel: "Payout id",
  adopted: "Transaction adopted.",
  rejectForeign: "Reject",
  foreignRejected: "Transaction recorded as a foreign outflow.",
};

const $ = (id) => document.getElementById(id);

async function call(method, path, body) {
  const init = {method, headers: {"Accept": "application/json"}, credentials: "same-origin"};
  if (method !== "GET") { init.headers["X-Admin-Request"] = "1"; }
  if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const response = await fetch(path, init);
  if (response.status === 401 && path !== "/admin/api/session") { show("signed-out"); throw new Error(TEXT.signedOut); }
  if (!response.ok) {
    let detail = response.statusText;
    try { detail = (await response.json()).detail || detail; } catch (_) { /* not JSON */ }
    const error = new Error(detail); error.status = response.status; throw error;
  }
  return response.status === 204 ? null : response.json();
}

function say(text) { $("status").textContent = text; }

function show(view) {
  document.body.dataset.view = view;
  $("sign-in").hidden = view !== "signed-out";
  $("console").hidden = view !== "console";
  $("sign-out").hidden = view !== "console";
  $("refresh").hidden = view !== "console";
}

function cell(text, cls) {
  const td = document.createElement("td");
  td.textContent = text === null || text === undefined ? "—" : String(text);
  if (cls) { td.className = cls; }
  return td;
}

function button(label, onClick, data) {
  const b = document.createElement("button");
  b.type = "button"; b.className = "small"; b.textContent = label;
  Object.assign(b.dataset, data || {});
  b.addEventListener("click", onClick);
  return b;
}

function fill(tableId, rows, build) {
  const body = $(tableId).querySelector("tbody");
  if (!rows.length) {
    const tr = document.createElement("tr");
    const td = cell(TEXT.none, "muted"); td.colSpan = $(tableId).querySelectorAll("th").length;
    tr.append(td); body.replaceChildren(tr); return;
  }
  body.replaceChildren(...rows.map((row) => { const tr = document.createElement("tr"); build(tr, row); return tr; }));
}

async function act(method, path, done, body) {
  try { await call(method, path, body); say(done); await load(); } catch (error) { say(TEXT.failed + error.message); }
}

function adoptForm(t) {
  const form = document.createElement("form");
  form.className = "inline";
  const label = document.createElement("label");
  label.className = "sr-only"; label.textContent = TEXT.payoutIdLabel; label.htmlFor = `adopt-${t.txHash}`;
  const input = document.createElement("input");
  input.id = `adopt-${t.txHash}`; input.required = true; input.placeholder = TEXT.payoutIdLabel; input.size = 16;
  const submit = document.createElement("button");
  submit.type = "submit"; submit.className = "small"; submit.textContent = TEXT.adopt;
  form.append(label, input, " ", submit);
  form.dataset.adopt = t.txHash;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    act("POST", `/admin/api/foreign/${t.chainId}/${t.txHash}/adopt`, TEXT.adopted, {payoutId: input.value.trim()});
  });
  return form;
}

function render(data) {
  fill("findings", data.findings, (tr, f) => {
    if (f.critical) { tr.className = "critical"; }
    tr.dataset.finding = f.id;
    tr.append(cell(f.kind + (f.critical ? ` (${TEXT.critical})` : "")), cell(`${f.chainId} ${f.assetCode || ""}`),
      cell(f.address, "mono"), cell(f.expected), cell(f.actual), cell(f.detail));
    const td = document.createElement("td");
    if (f.sticky) {
      td.append(button(TEXT.acknowledge, () => act("POST", `/admin/api/findings/${f.id}/acknowledge`, TEXT.acknowledged),
        {acknowledge: f.id}));
    }
    tr.append(td);
  });
  fill("foreign", data.foreign, (tr, t) => {
    tr.dataset.foreign = t.txHash;
    tr.append(cell(t.chainId), cell(`${t.role} ${t.wallet}`, "mono"), cell(t.nonce), cell(t.txHash, "mono"),
      cell(`${t.valueMinor} to ${t.to}${t.data !== "0x" ? " (with data)" : ""}`, "mono"));
    const td = document.createElement("td");
    td.append(adoptForm(t), " ",
      button(TEXT.rejectForeign, () => act("POST", `/admin/api/foreign/${t.chainId}/${t.txHash}/reject`, TEXT.foreignRejected),
        {rejectForeign: t.txHash}));
    tr.append(td);
  });
  fill("approvals", data.approvals, (tr, p) => {
    tr.dataset.payout = p.payoutId;
    tr.append(cell(p.payoutId, "mono"), cell(p.operatorId), cell(p.amount), cell(p.destination, "mono"), cell(p.createdAt));
    const td = document.createElement("td");
    td.append(button(TEXT.approve, () => act("POST", `/admin/api/payouts/${p.id}/approve`, TEXT.approved), {approve: p.payoutId}),
      " ", button(TEXT.reject, () => act("POST", `/admin/api/payouts/${p.id}/reject`, TEXT.rejected), {reject: p.payoutId}));
    tr.append(td);
  });
  fill("operators", data.operators, (tr, o) => {
    const paused = o.controls.paused;
    tr.dataset.operator = o.operatorId;
    tr.dataset.paused = String(paused);
    const balances = o.balances.map((b) => `${b.assetId}: ${b.available || b.availableMinor}`).join("; ");
    const limits = o.controls.limits.filter((l) => l.summary).map((l) => `${l.assetId}: ${l.summary}`);
    const allowed = o.controls.allowedDestinations.length;
    const controls = [...limits, allowed ? TEXT.allowList(allowed) : TEXT.anyDestination].join("; ");
    tr.append(cell(o.operatorId, "mono"), cell(o.controls.ledgerMode), cell(paused ? TEXT.pausedState : TEXT.running),
      cell(controls), cell(balances || "—"));
    const td = document.createElement("td");
    td.append(button(TEXT.entries, () => showEntries(o.operatorId), {entries: o.operatorId}), " ");
    td.append(paused
      ? button(TEXT.resume, () => act("POST", `/admin/api/operators/${o.operatorId}/resume`, TEXT.resumed), {resume: o.operatorId})
      : button(TEXT.pause, () => act("POST", `/admin/api/operators/${o.operatorId}/pause`, TEXT.paused), {pause: o.operatorId}));
    tr.append(td);
  });
  fill("sweeps", data.sweeps.sweeps || [], (tr, s) => {
    tr.append(cell(s.sweepId), cell(s.chainId), cell(s.assetCode), cell(s.address, "mono"), cell(s.status), cell(s.amountMinor));
  });
  const b = data.backups;
  $("backups-state").textContent = b.scheduled
    ? TEXT.scheduled(b.everyHours, b.runs.length ? `${b.runs[0].finishedAt} (${b.runs[0].passed ? "passed" : "failed"})` : null)
    : TEXT.notScheduled;
  fill("drills", b.drills, (tr, d) => {
    if (!d.passed) { tr.className = "critical"; }
    tr.append(cell(d.backup, "mono"), cell(d.destination, "mono"), cell(d.drilledAt),
      cell(d.passed ? TEXT.drillPassed : TEXT.drillFailed), cell(d.detail));
  });
  fill("audit", data.audit, (tr, e) => {
    tr.dataset.action = e.action;
    const change = `${e.before ? JSON.stringify(e.before) : "—"} → ${e.after ? JSON.stringify(e.after) : "—"}`;
    tr.append(cell(e.at), cell(e.actor), cell(e.action), cell(e.subject), cell(change, "mono"));
  });
  const chain = data.auditChain;
  $("audit-chain").textContent = chain.ok ? TEXT.chainOk(chain.entries, chain.head) : TEXT.chainBroken(chain.brokenAt, chain.reason);
  $("audit-chain").className = "small " + (chain.ok ? "ok" : "error");
}

async function showEntries(operatorId) {
  try {
    const data = await call("GET", `/admin/api/operators/${operatorId}/entries`);
    $("entries-title").textContent = TEXT.entriesOf(operatorId);
    fill("entries", data.entries, (tr, e) => {
      tr.dataset.kind = e.kind;
      tr.append(cell(e.createdAt), cell(e.kind), cell(e.assetId), cell(e.amount), cell(e.ref, "mono"),
        cell([e.memo, e.actor].filter(Boolean).join(" · ") || "—"));
    });
    $("entries-card").hidden = false;
    $("entries-title").tabIndex = -1;
    $("entries-title").focus();
  } catch (error) { say(TEXT.failed + error.message); }
}

async function load() {
  render(await call("GET", "/admin/api/overview"));
  document.body.dataset.loaded = String(Date.now());
}

async function loadTreasury() {
  say(TEXT.loading);
  try {
    const data = await call("GET", "/admin/api/treasury");
    fill("treasury", data.positions, (tr, p) => {
      tr.append(cell(p.chainId), cell(p.assetCode), cell(p.role), cell(p.address, "mono"), cell(p.onChain), cell(p.expected));
    });
    fill("solvency", data.solvency, (tr, s) => {
      if (s.shortfallMinor !== "0") { tr.className = "critical"; }
      tr.dataset.asset = `${s.chainId}:${s.assetCode}`;
      tr.append(cell(s.chainId), cell(s.assetCode), cell(s.owed), cell(s.inFlight), cell(s.held), cell(s.shortfall), cell(s.deploymentCosts));
    });
    say(TEXT.loaded);
  } catch (error) { say(TEXT.failed + error.message); }
}

$("sign-in").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("sign-in-error").textContent = "";
  try {
    await call("POST", "/admin/api/session", {password: $("password").value, code: $("code").value});
    $("password").value = ""; $("code").value = "";
    show("console");
    await load();
    $("main").focus();
  } catch (error) { $("sign-in-error").textContent = error.message; }
});
$("sign-out").addEventListener("click", async () => {
  try { await call("DELETE", "/admin/api/session"); } catch (_) { /* already ended */ }
  show("signed-out"); say(TEXT.signedOut);
});
$("refresh").addEventListener("click", () => load().then(() => say(TEXT.loaded), (e) => say(TEXT.failed + e.message)));
$("load-treasury").addEventListener("click", loadTreasury);

(async () => {
  try { show("console"); await load(); } catch (_) { show("signed-out"); $("password").focus(); }
})();
