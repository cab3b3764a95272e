// The console's other views: cash (settlements awaiting confirmation, confirm, shortfalls), team
// (members, roles, disable, login links, invites) and company (settings, order settings, logo,
// depots, billing).
// Each loads when shown; the API decides who may do what (a dispatcher's refused change is shown
// as the API's Problem; the Company view shows a dispatcher its owners-only forms read-only).
import {amd} from "/static/js/i18n.js";
import {MessageSettings} from "/static/console/messages.js";
import {FiscalSettings} from "/static/console/fiscal.js";
import {OrderSettings} from "/static/console/ordersettings.js";

const $ = (id) => document.getElementById(id);

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

export class Admin {
  constructor(ctx) {
    this.ctx = ctx;
    this.view = null;
    $("invite-form").addEventListener("submit", (event) => { event.preventDefault(); this.invite(); });
    $("courier-form").addEventListener("submit", (event) => { event.preventDefault(); this.createCourier(); });
    $("invite-link-copy").addEventListener("click", () => this.ctx.board.copy("invite-link"));
    $("login-link-copy").addEventListener("click", () => this.ctx.board.copy("login-link"));
    $("company-form").addEventListener("submit", (event) => { event.preventDefault(); this.saveCompany(); });
    $("c-logo-file").addEventListener("change", () => this.uploadLogo());
    $("depot-form").addEventListener("submit", (event) => { event.preventDefault(); this.addDepot(); });
    this.messages = new MessageSettings(ctx);
    this.fiscal = new FiscalSettings(ctx);
    this.orderSettings = new OrderSettings(ctx);
  }

  async show(view) {
    this.view = view;
    try {
      if (view === "cash") { await this.loadCash(); }
      if (view === "team") { await this.loadTeam(); }
      if (view === "company") { await this.loadCompany(); }
    } catch (error) { this.ctx.fail(error); }
  }

  render() { if (this.view && this.view !== "day" && this.ctx.session) { this.show(this.view); } }

  onEvent(event) {
    if (this.view === "cash" && event.kind.startsWith("cash.")) { this.loadCash().catch(() => {}); }
  }

  // ---- cash -------------------------------------------------------------------------------
  async loadCash() {
    const T = this.ctx.T, lang = this.ctx.lang, api = this.ctx.api;
    const [{settlements: waiting}, {settlements: confirmed}] = await Promise.all([
      api.get("/cash/settlements?status=submitted"), api.get("/cash/settlements?status=confirmed")]);
    $("settlements").querySelector("tbody").replaceChildren(...waiting.map((s) => {
      // Received starts empty: the dispatcher counts the cash and types what is in hand; Confirm
      // waits for that number (one click can no longer confirm without counting).
      const received = el("input", {type: "number", min: "0", step: "1", value: "", placeholder: T.countIt, "aria-label": T.received, dataset: {received: s.id}});
      const note = el("input", {maxLength: 1000, "aria-label": T.note, dataset: {note: s.id}});
      const confirm = button(T.confirm, async () => {
        if (received.value === "") { received.focus(); return; }
        const body = {receivedAmd: parseInt(received.value, 10), note: note.value.trim() || null};
        try { await api.post("/cash/settlements/" + s.id + "/confirm", body); await this.loadCash(); } catch (error) { this.ctx.fail(error); }
      }, {className: "small", dataset: {confirm: s.id}});
      confirm.disabled = true;
      received.addEventListener("input", () => { confirm.disabled = received.value === ""; });
      // The orders behind the total (and a shortfall carried from an earlier handover).
      const covered = s.orders.reduce((sum, o) => sum + o.amountAmd, 0);
      const behind = el("ul", {className: "small muted", dataset: {behind: s.id}},
        ...s.orders.map((o) => el("li", {dataset: {covered: o.orderId}}, o.publicId + " · " + amd(o.amountAmd, lang) + " · " + when(o.collectedAt, lang))),
        s.expectedAmd > covered ? el("li", {dataset: {carried: String(s.expectedAmd - covered)}}, T.carriedShortfall + " " + amd(s.expectedAmd - covered, lang)) : null);
      return el("tr", {dataset: {settlement: s.id}}, el("td", {}, s.courierName), el("td", {}, amd(s.expectedAmd, lang), behind),
        el("td", {}, when(s.submittedAt, lang)), el("td", {}, received), el("td", {}, note), el("td", {}, confirm));
    }));
    $("no-settlements").hidden = waiting.length > 0;
    $("confirmed").replaceChildren(...confirmed.slice(0, 50).map((s) => el("li", {dataset: {confirmed: s.id}},
      el("span", {className: "grow"}, s.courierName + " · " + amd(s.receivedAmd, lang) + " / " + amd(s.expectedAmd, lang) + " · " + when(s.confirmedAt, lang)),
      s.shortfallAmd ? el("span", {className: "badge risk"}, T.shortfall + " " + amd(s.shortfallAmd, lang) + (s.note ? " · " + s.note : "")) : null)));
  }

  // ---- team -------------------------------------------------------------------------------
  async loadTeam() {
    const T = this.ctx.T, lang = this.ctx.lang, api = this.ctx.api;
    const team = await api.get("/company/members");
    const me = this.ctx.session.user.id;
    $("members").querySelector("tbody").replaceChildren(...team.members.map((m) => {
      const role = el("select", {"aria-label": T.role + " " + m.name, disabled: m.userId === me, dataset: {role: m.userId}},
        ...["owner", "dispatcher", "courier"].map((r) => el("option", {value: r, selected: r === m.role}, T["role_" + r])));
      role.addEventListener("change", () => this.patchMember(m, {role: role.value}));
      const actions = el("div", {className: "actions"});
      if (m.userId !== me) {
        const next = m.status === "active" ? "disabled" : "active";
        actions.append(button(next === "disabled" ? T.disable : T.enable, () => this.patchMember(m, {status: next}), {dataset: {toggle: m.userId}}));
        if (m.role !== "owner") {
          actions.append(button(T.loginLinkMake, async () => {
            try {
              const link = await api.post("/company/members/" + m.userId + "/login-link", {});
              $("login-link").value = link.link; $("login-link-box").hidden = false; $("login-link").select();
            } catch (error) { this.ctx.fail(error); }
          }, {dataset: {loginLink: m.userId}}));
        }
      }
      return el("tr", {dataset: {member: m.userId, status: m.status}}, el("td", {}, m.name), el("td", {}, m.email || m.phone || ""),
        el("td", {}, role), el("td", {}, m.status === "active" ? T.active_status : T.disabled_status), el("td", {}, actions));
    }));
    $("invites").replaceChildren(...team.invites.map((invite) => el("li", {dataset: {invite: invite.id}},
      el("span", {className: "grow"}, invite.name + " · " + T["role_" + invite.role] + " · " + (invite.email || invite.phone || "") + " · " + T.expires + when(invite.expiresAt, lang)),
      button(T.revoke, async () => {
        try { await api.del("/company/invites/" + invite.id); await this.loadTeam(); } catch (error) { this.ctx.fail(error); }
      }))));
    await this.loadInvitesMade();
  }

  // Every invite the company made (owners only): who invited which address, as what, when, and
  // what became of its link. An invite link tells whether its address has an account, so the
  // owners see each one that was made.
  async loadInvitesMade() {
    const T = this.ctx.T, lang = this.ctx.lang;
    const box = $("invites-made-box");
    box.hidden = this.ctx.session.role !== "owner";
    if (box.hidden) return;
    const history = await this.ctx.api.get("/company/invites/history");
    $("invites-made").replaceChildren(...history.invites.map((r) => el("li", {dataset: {inviteMade: r.id, state: r.state}},
      el("span", {className: "grow"}, when(r.createdAt, lang) + " · " + (r.invitedBy ? r.invitedBy.name || "" : "") + " → " +
        r.name + " · " + (r.email || r.phone || "") + " · " + T["role_" + r.role] + " · " + (T["invite_" + r.state] || r.state)))));
  }

  async patchMember(member, change) {
    try { await this.ctx.api.patch("/company/members/" + member.userId, change); await this.loadTeam(); } catch (error) { this.ctx.fail(error); this.loadTeam().catch(() => {}); }
  }

  async invite() {
    const body = {name: $("i-name").value.trim(), role: $("i-role").value, email: $("i-email").value.trim() || null, phone: $("i-phone").value.trim() || null};
    try {
      const created = await this.ctx.api.post("/company/invites", body);
      $("invite-link").value = created.link; $("invite-link-box").hidden = false;
      $("invite-form").reset();
      await this.loadTeam();
    } catch (error) { this.ctx.fail(error); }
  }

  // A courier who signs in at once with the password the dispatcher hands over (POST /couriers:
  // a company-set password, good in this company only until the courier proves the address).
  async createCourier() {
    const optional = (id) => $(id).value.trim() || null;
    const body = {displayName: $("nc-name").value.trim(), email: $("nc-email").value.trim(), password: $("nc-password").value,
      phone: optional("nc-phone"), vehicleLabel: optional("nc-vehicle")};
    try {
      const {courier} = await this.ctx.api.post("/couriers", body);
      $("courier-form").reset();
      $("courier-created").textContent = this.ctx.T.courierCreated + courier.email;
      await this.loadTeam();
      this.ctx.fleet.load().catch(() => {});
    } catch (error) { this.ctx.fail(error); }
  }

  // ---- company ----------------------------------------------------------------------------
  async loadCompany() {
    const T = this.ctx.T, lang = this.ctx.lang, api = this.ctx.api;
    // Billing is the owners' (GET /company/billing answers anyone else 403): a dispatcher sees the
    // rest of the view without it. The order settings show their own refusal beside their form.
    const owner = this.ctx.session.role === "owner";
    $("billing-panel").hidden = !owner;
    const [{company}, {depots}, {billing}] = await Promise.all([api.get("/company"), api.get("/company/depots"),
      owner ? api.get("/company/billing") : {billing: null}, this.orderSettings.load(), this.messages.load(), this.fiscal.load()]);
    $("c-name").value = company.name; $("c-city").value = company.city; $("c-phone").value = company.phone || "";
    $("c-support").value = company.supportPhone || ""; $("c-brand").value = company.brandColor || "#1F6FEB";
    $("c-show-phone").checked = company.showCourierPhone;
    $("c-logo").hidden = !company.logoUrl;
    if (company.logoUrl) { $("c-logo").src = company.logoUrl; }
    // The company's settings, logo and depots are the owners' to change (PATCH /company and the
    // depot routes answer anyone else 403): a dispatcher reads them.
    [...$("company-form").elements, ...$("depot-form").elements].forEach((control) => { control.disabled = !owner; });
    $("company-save").hidden = !owner;
    $("depot-form").hidden = !owner;
    $("company-owners-only").hidden = owner;
    $("depots").replaceChildren(...depots.map((d) => el("li", {dataset: {depot: d.id}},
      el("span", {className: "grow"}, d.name + " · " + d.address + " · " + d.point.lat.toFixed(5) + ", " + d.point.lon.toFixed(5) + (d.isDefault ? " · " + T.default : "")),
      d.isDefault || !owner ? null : button(T.makeDefault, () => this.depot("PATCH", d.id, {isDefault: true})),
      owner ? button(T.remove, () => this.depot("DELETE", d.id)) : null)));
    if (!billing) { return; }
    const b = billing;
    const price = b.priceAmd === null ? "" : " · " + amd(b.priceAmd, lang);
    $("billing").replaceChildren(
      el("p", {}, el("strong", {}, T.plan_ + " " + b.plan + price), b.trialActive ? " · " + T.trialUntil + when(b.trialEndsAt, lang) : ""),
      el("p", {}, T.deliveriesThisMonth + ": " + b.usage.deliveriesThisMonth + (b.limits.deliveriesPerMonth ? " / " + b.limits.deliveriesPerMonth : "") +
        " · " + T.activeCouriers + ": " + b.usage.activeCouriers + (b.limits.couriers ? " / " + b.limits.couriers : "")),
      el("div", {className: "row"}, ...b.plans.map((row) => {
        const choose = button(row.plan + (row.priceAmd === null ? "" : " · " + amd(row.priceAmd, lang)), async () => {
          try { await this.ctx.api.patch("/company/plan", {plan: row.plan}); await this.loadCompany(); } catch (error) { this.ctx.fail(error); }
        }, {disabled: row.plan === b.plan, dataset: {plan: row.plan}});
        return choose;
      })),
      el("p", {className: "muted small"}, T.noPayment));
  }

  async saveCompany() {
    const body = {name: $("c-name").value.trim(), city: $("c-city").value.trim(), phone: $("c-phone").value.trim() || null,
                  supportPhone: $("c-support").value.trim() || null, brandColor: $("c-brand").value.toUpperCase(),
                  showCourierPhone: $("c-show-phone").checked};
    try {
      await this.ctx.api.patch("/company", body);
      $("company-error").textContent = "";
      this.ctx.toast(this.ctx.T.saved);
      document.documentElement.style.setProperty("--brand", body.brandColor);
    } catch (error) { $("company-error").textContent = this.ctx.explain(error); }
  }

  // The logo goes straight to object storage through a presigned PUT; its key is then set.
  async uploadLogo() {
    const file = $("c-logo-file").files[0];
    if (!file) { return; }
    try {
      const upload = await this.ctx.api.post("/company/logo/upload-url", {contentType: file.type});
      const put = await fetch(upload.url, {method: "PUT", headers: {"Content-Type": file.type}, body: file});
      if (!put.ok) { throw new Error("upload " + put.status); }
      await this.ctx.api.patch("/company", {logoKey: upload.key});
      await this.loadCompany();
    } catch (error) { this.ctx.fail(error); }
  }

  async depot(method, id, body) {
    try { await this.ctx.api.request(method, "/company/depots/" + id, body); await this.loadCompany(); } catch (error) { this.ctx.fail(error); }
  }

  async addDepot() {
    const body = {name: $("dp-name").value.trim(), address: $("dp-address").value.trim(),
                  point: {lat: parseFloat($("dp-lat").value), lon: parseFloat($("dp-lon").value)}};
    try { await this.ctx.api.post("/company/depots", body); $("depot-form").reset(); await this.loadCompany(); } catch (error) { this.ctx.fail(error); }
  }
}

