// The Integrations view (owners only, issue 46): integration keys (created and shown once, with a
// copy button, then never again; revoked after a confirmation) and webhook endpoints (created with
// their events, the signing secret shown once; deleted after a confirmation), each endpoint with
// its deliveries, their attempts and last error, and a Resend for a given-up one. Each key's proof
// default (issue 47: what its orders need when they name none) is changed in its row.
// Its words: the INTEGRATION_TEXTS block of texts.js.
import {PROOF_KINDS} from "/static/console/ordersettings.js";

const $ = (id) => document.getElementById(id);
const EVENTS = ["order.created", "order.assigned", "order.picked_up", "order.delivered", "order.failed", "order.cancelled"];

function el(tag, attributes, ...children) {
  const element = document.createElement(tag);
  Object.entries(attributes || {}).forEach(([key, value]) => {
    if (value === undefined || value === null || value === false) { return; }
    if (key === "dataset") { Object.assign(element.dataset, value); } else if (key in element) { element[key] = value; } else { element.setAttribute(key, value); }
  });
  element.append(...children.filter((c) => c !== null && c !== undefined));
  return element;
}

function button(label, onClick, attributes) {
  const b = el("button", Object.assign({type: "button", className: "small ghost"}, attributes || {}), label);
  b.addEventListener("click", onClick);
  return b;
}

function when(iso, lang) {
  return iso ? new Date(iso).toLocaleString(lang, {timeZone: "Asia/Yerevan", dateStyle: "short", timeStyle: "short"}) : "";
}

export class Integrations {
  constructor(ctx) {
    this.ctx = ctx;
    this.keys = [];
    this.webhooks = [];
    this.open = new Set();        // endpoints whose deliveries are shown
    this.deliveries = new Map();  // endpoint id -> its deliveries as last loaded
    // key id -> its proof default being edited ({company, kinds, error}): kept across re-renders
    // (a language change, a reload of the list), so nothing ticked is lost before Save.
    this.proofDrafts = new Map();
    this.shown = false;
    $("key-form").addEventListener("submit", (event) => { event.preventDefault(); this.createKey(); });
    $("webhook-form").addEventListener("submit", (event) => { event.preventDefault(); this.createWebhook(); });
    $("key-copy").addEventListener("click", () => this.ctx.board.copy("key-value"));
    $("secret-copy").addEventListener("click", () => this.ctx.board.copy("secret-value"));
    // Once hidden, a key or secret is gone from the page: nothing keeps it.
    $("key-done").addEventListener("click", () => this.forget("key", $("key-name")));
    $("secret-done").addEventListener("click", () => this.forget("secret", $("webhook-url")));
    const events = $("webhook-events");
    EVENTS.forEach((name) => {
      events.append(el("label", {className: "check"}, el("input", {type: "checkbox", value: name, checked: name === "order.delivered" || name === "order.failed"}), " ", el("span", {dataset: {event: name}})));
    });
  }

  get T() { return this.ctx.T; }

  async show() {
    this.shown = true;
    try { await Promise.all([this.loadKeys(), this.loadWebhooks()]); } catch (error) { this.ctx.fail(error); }
  }

  hide() { this.shown = false; this.forget("key"); this.forget("secret"); }

  render() {
    document.querySelectorAll("#webhook-events [data-event]").forEach((span) => { span.textContent = this.T["event_" + span.dataset.event.replace(".", "_")] || span.dataset.event; });
    if (this.shown) { this.renderKeys(); this.renderWebhooks(); }
  }

  forget(what, focusTo) {
    $(what + "-value").value = "";
    $(what + "-shown").hidden = true;
    if (focusTo) { focusTo.focus(); }
  }

  // A confirmation in the page's own dialog; focus goes back where it was when it closes.
  confirm(text, yes) {
    const dialog = $("int-confirm-dialog");
    const back = document.activeElement;
    $("int-confirm-text").textContent = text;
    $("int-confirm-yes").textContent = yes;
    dialog.returnValue = "";
    dialog.showModal();
    $("int-confirm-no").focus();
    return new Promise((resolve) => {
      dialog.addEventListener("close", () => {
        if (back && back.isConnected) { back.focus(); }
        resolve(dialog.returnValue === "yes");
      }, {once: true});
    });
  }

  // -- keys ---------------------------------------------------------------------------------------

  async loadKeys() {
    this.keys = (await this.ctx.api.get("/company/integration-keys")).keys;
    const live = new Set(this.keys.map((k) => k.id));
    [...this.proofDrafts.keys()].filter((id) => !live.has(id)).forEach((id) => this.proofDrafts.delete(id));
    this.renderKeys();
  }

  renderKeys() {
    const T = this.T, lang = this.ctx.lang;
    const focused = document.activeElement && document.activeElement.closest("#keys") ? document.activeElement.dataset.focusKey : null;
    $("keys").tBodies[0].replaceChildren(...this.keys.map((key) => {
      const editing = this.proofDrafts.has(key.id);
      const edit = button(T.intProofChange, () => this.editProof(key), {
        "aria-expanded": String(editing), "aria-controls": "key-proof-" + key.id, "aria-label": T.intProofChange + " · " + key.name,
        dataset: {keyProofEdit: key.id, focusKey: "proof-" + key.id}});
      return el("tr", {dataset: {key: key.id}},
        el("td", {}, key.name), el("td", {}, when(key.createdAt, lang)),
        // The proof this key's orders need by default (issue 47, docs/orders.md); null: the company's.
        el("td", {dataset: {keyProofCell: key.id}},
          el("span", {dataset: {keyProof: key.id}}, key.proofRequired === null || key.proofRequired === undefined ? T.intProofCompany
            : key.proofRequired.map((k) => T["proofKind_" + k] || k).join(", ") || "—"),
          " ", edit, editing ? this.proofEditor(key) : null),
        el("td", {}, button(T.intRevoke, () => this.revokeKey(key), {"aria-label": T.intRevoke + " " + key.name, dataset: {revoke: key.id, focusKey: "revoke-" + key.id}})));
    }));
    $("no-keys").hidden = this.keys.length > 0;
    if (focused) { const again = document.querySelector(`#keys [data-focus-key="${focused}"]`); if (again) { again.focus(); } }
  }

  // The key's proof default: "the company's setting" (null), or its own set of kinds ([] none).
  proofEditor(key) {
    const T = this.T;
    const draft = this.proofDrafts.get(key.id);
    const kinds = PROOF_KINDS.map((kind) => {
      const box = el("input", {type: "checkbox", value: kind, checked: draft.kinds.has(kind), disabled: draft.company, dataset: {keyProofKind: kind, focusKey: "proof-" + key.id + "-" + kind}});
      box.addEventListener("change", () => { if (box.checked) { draft.kinds.add(kind); } else { draft.kinds.delete(kind); } });
      return el("label", {className: "check"}, box, " ", T["proofKind_" + kind] || kind);
    });
    const company = el("input", {type: "checkbox", checked: draft.company, dataset: {keyProofCompany: key.id, focusKey: "proof-" + key.id + "-company"}});
    company.addEventListener("change", () => {
      draft.company = company.checked;
      kinds.forEach((label) => { label.querySelector("input").disabled = draft.company; });
    });
    return el("fieldset", {id: "key-proof-" + key.id, className: "key-proof"},
      el("legend", {}, T.intProofFor + " " + key.name),
      el("div", {}, el("label", {className: "check"}, company, " ", T.intProofCompany)),
      el("div", {}, ...kinds),
      el("p", {className: "error small", role: "alert", dataset: {keyProofError: key.id}}, draft.error || ""),
      el("div", {className: "row"},
        button(T.save, () => this.saveProof(key), {className: "small", dataset: {keyProofSave: key.id, focusKey: "proof-" + key.id + "-save"}}),
        button(T.intProofCancel, () => this.closeProof(key), {dataset: {keyProofCancel: key.id, focusKey: "proof-" + key.id + "-cancel"}})));
  }

  editProof(key) {
    if (this.proofDrafts.has(key.id)) { this.closeProof(key); return; }
    const own = key.proofRequired === null || key.proofRequired === undefined ? null : key.proofRequired;
    this.proofDrafts.set(key.id, {company: own === null, kinds: new Set(own || []), error: ""});
    this.renderKeys();
    const first = document.querySelector(`#key-proof-${key.id} input`);
    if (first) { first.focus(); }
  }

  closeProof(key) {
    this.proofDrafts.delete(key.id);
    this.renderKeys();
    const edit = document.querySelector(`#keys [data-key-proof-edit="${key.id}"]`);
    if (edit) { edit.focus(); }
  }

  async saveProof(key) {
    const draft = this.proofDrafts.get(key.id);
    const proofRequired = draft.company ? null : PROOF_KINDS.filter((kind) => draft.kinds.has(kind));
    try {
      const saved = await this.ctx.api.patch("/company/integration-keys/" + key.id, {proofRequired});
      this.keys = this.keys.map((k) => (k.id === saved.id ? saved : k));
      this.ctx.toast(this.T.saved);
      this.closeProof(saved);
    } catch (error) {
      draft.error = this.ctx.explain(error);
      const shown = document.querySelector(`#keys [data-key-proof-error="${key.id}"]`);
      if (shown) { shown.textContent = draft.error; }
    }
  }

  async createKey() {
    const name = $("key-name").value.trim();
    if (!name) { return; }
    try {
      const created = await this.ctx.api.post("/company/integration-keys", {name});
      $("key-name").value = "";
      $("key-value").value = created.key;
      $("key-shown").hidden = false;
      $("key-value").focus();
      $("key-value").select();
      await this.loadKeys();
    } catch (error) { this.ctx.fail(error); }
  }

  async revokeKey(key) {
    if (!(await this.confirm(this.T.intRevokeAsk.replace("{name}", key.name), this.T.intRevoke))) { return; }
    try {
      await this.ctx.api.del("/company/integration-keys/" + key.id);
      this.ctx.toast(this.T.intRevoked);
      await this.loadKeys();
      $("key-name").focus();  // the row and its button are gone
    } catch (error) { this.ctx.fail(error); }
  }

  // -- webhooks -----------------------------------------------------------------------------------

  async loadWebhooks() {
    this.webhooks = (await this.ctx.api.get("/company/webhooks")).webhooks;
    const live = new Set(this.webhooks.map((w) => w.id));
    [...this.open].filter((id) => !live.has(id)).forEach((id) => { this.open.delete(id); this.deliveries.delete(id); });
    await Promise.all([...this.open].map((id) => this.loadDeliveries(id, false)));
    this.renderWebhooks();
  }

  async loadDeliveries(id, render = true) {
    this.deliveries.set(id, (await this.ctx.api.get("/company/webhooks/" + id + "/deliveries")).deliveries);
    if (render) { this.renderWebhooks(); }
  }

  renderWebhooks() {
    const T = this.T, lang = this.ctx.lang;
    const focused = document.activeElement && document.activeElement.closest("#webhooks") ? document.activeElement.dataset.focusKey : null;
    $("webhooks").replaceChildren(...this.webhooks.map((hook) => {
      const open = this.open.has(hook.id);
      const toggle = button(T.intDeliveries, () => this.toggle(hook.id), {"aria-expanded": String(open), "aria-controls": "deliveries-" + hook.id, dataset: {deliveries: hook.id, focusKey: "toggle-" + hook.id}});
      const item = el("li", {className: "webhook", dataset: {webhook: hook.id}},
        el("div", {className: "row"},
          el("strong", {className: "grow url"}, hook.url),
          toggle,
          button(T.intRefresh, () => this.loadDeliveries(hook.id).catch((e) => this.ctx.fail(e)), {hidden: !open, dataset: {refresh: hook.id, focusKey: "refresh-" + hook.id}}),
          button(T.intDelete, () => this.deleteWebhook(hook), {"aria-label": T.intDelete + " " + hook.url, dataset: {deleteWebhook: hook.id, focusKey: "delete-" + hook.id}})),
        el("p", {className: "muted small"}, hook.events.map((e) => T["event_" + e.replace(".", "_")] || e).join(", ")),
        hook.failingSince ? el("p", {className: "warning small"}, T.intFailingSince + " " + when(hook.failingSince, lang) + (hook.lastError ? ": " + hook.lastError : "")) : null);
      if (open) { item.append(this.deliveryTable(hook)); }
      return item;
    }));
    $("no-webhooks").hidden = this.webhooks.length > 0;
    if (focused) { const again = document.querySelector(`#webhooks [data-focus-key="${focused}"]`); if (again) { again.focus(); } }
  }

  deliveryTable(hook) {
    const T = this.T, lang = this.ctx.lang;
    const rows = this.deliveries.get(hook.id) || [];
    const table = el("table", {className: "deliveries"},
      el("caption", {className: "sr-only"}, T.intDeliveries + " " + hook.url),
      el("thead", {}, el("tr", {}, ...[T.intEvent, T.intCreated, T.status, T.intAttempts, T.intLastError, T.actions].map((h) => el("th", {scope: "col"}, h)))),
      el("tbody", {}, ...rows.map((d) => el("tr", {dataset: {delivery: d.id, status: d.status}},
        el("td", {}, T["event_" + d.eventType.replace(".", "_")] || d.eventType),
        el("td", {}, when(d.createdAt, lang)),
        el("td", {}, (T["delivery_" + d.status] || d.status) + (d.status === "queued" && d.nextAttemptAt && d.attempts ? " · " + T.intNext + " " + when(d.nextAttemptAt, lang) : "") + (d.deliveredAt ? " · " + when(d.deliveredAt, lang) : "")),
        el("td", {}, String(d.attempts)),
        el("td", {className: "error-text"}, d.lastError || ""),
        el("td", {}, d.status === "failed" ? button(T.intResend, () => this.resend(hook, d), {dataset: {resend: d.id, focusKey: "resend-" + d.id}}) : "")))));
    return el("div", {className: "table-wrap", id: "deliveries-" + hook.id}, table,
      rows.length ? null : el("p", {className: "muted small"}, T.intNoDeliveries));
  }

  async toggle(id) {
    if (this.open.has(id)) { this.open.delete(id); this.renderWebhooks(); return; }
    this.open.add(id);
    try { await this.loadDeliveries(id); } catch (error) { this.open.delete(id); this.ctx.fail(error); }
  }

  async resend(hook, delivery) {
    try {
      const answer = await this.ctx.api.post("/company/webhooks/" + hook.id + "/deliveries/" + delivery.id + "/resend", {});
      const rows = this.deliveries.get(hook.id) || [];
      this.deliveries.set(hook.id, rows.map((d) => (d.id === answer.id ? answer : d)));
      this.ctx.toast(this.T.intResent);
      this.renderWebhooks();
      const toggle = document.querySelector(`#webhooks [data-deliveries="${hook.id}"]`);
      if (toggle) { toggle.focus(); }  // the Resend button is gone with the failed status
    } catch (error) { this.ctx.fail(error); }
  }

  async createWebhook() {
    const url = $("webhook-url").value.trim();
    const events = [...document.querySelectorAll("#webhook-events input:checked")].map((box) => box.value);
    if (!events.length) { this.ctx.toast(this.T.intChooseEvents); return; }
    try {
      const created = await this.ctx.api.post("/company/webhooks", {url, events});
      $("webhook-url").value = "";
      $("secret-value").value = created.secret;
      $("secret-shown").hidden = false;
      $("secret-value").focus();
      $("secret-value").select();
      await this.loadWebhooks();
    } catch (error) { this.ctx.fail(error); }
  }

  async deleteWebhook(hook) {
    if (!(await this.confirm(this.T.intDeleteAsk.replace("{url}", hook.url), this.T.intDelete))) { return; }
    try {
      await this.ctx.api.del("/company/webhooks/" + hook.id);
      await this.loadWebhooks();
      $("webhook-url").focus();
    } catch (error) { this.ctx.fail(error); }
  }
}
