// The company's e-HDM credentials and receipt defaults (docs/fiscal-receipts.md), owners only: the
// private key is write-only (left empty, the saved one stays), the certificates are public and
// shown back; Check asks checkConnection, Activate asks activate then configureDepartments.
const $ = (id) => document.getElementById(id);

export class FiscalSettings {
  constructor(ctx) {
    this.ctx = ctx;
    $("fiscal-form").addEventListener("submit", (event) => { event.preventDefault(); this.save(); });
    $("fiscal-check").addEventListener("click", () => this.call("/company/fiscal/check"));
    $("fiscal-activate").addEventListener("click", () => this.call("/company/fiscal/activate"));
  }

  async load() {
    const form = $("fiscal-form");
    if (!this.ctx.session || this.ctx.session.role !== "owner") { form.hidden = true; return; }
    // Shown once what is saved is in it: typed into before the answer came, the answer would
    // overwrite it (a key pasted first and wiped, saved without it).
    try { this.fill(await this.ctx.api.get("/company/fiscal")); } finally { form.hidden = false; }
  }

  fill({settings}) {
    const T = this.ctx.T;
    $("f-key").value = "";
    $("f-key").placeholder = settings ? T.passwordKept : "";
    $("fiscal-cert").textContent = settings ? T.fiscalCertOf + " " + settings.certificateSubject + " · " + T.fiscalUntil + " " + settings.certificateNotAfter.slice(0, 10) : "";
    if (!settings) { return; }
    $("f-enabled").checked = settings.enabled; $("f-url").value = settings.baseUrl; $("f-crn").value = settings.crn;
    $("f-cashier").value = settings.cashierId; $("f-department").value = settings.department; $("f-regime").value = String(settings.taxRegime);
    $("f-adg").value = settings.adgCode; $("f-fee-adg").value = settings.feeAdgCode || ""; $("f-unit").value = settings.unit;
    $("f-agent").checked = settings.issueAsAgent; $("f-fee-line").checked = settings.feeOnReceipt;
    $("f-cert").value = settings.certificatePem; $("f-ca").value = settings.serverCaPem || "";
  }

  async save() {
    const text = (id) => $(id).value.trim();
    const body = {
      enabled: $("f-enabled").checked, baseUrl: text("f-url"), crn: text("f-crn"), certificatePem: text("f-cert"),
      cashierId: parseInt(text("f-cashier") || "0", 10), department: parseInt(text("f-department") || "0", 10),
      taxRegime: parseInt($("f-regime").value, 10), adgCode: text("f-adg"), unit: text("f-unit"),
      issueAsAgent: $("f-agent").checked, feeOnReceipt: $("f-fee-line").checked,
    };
    if (text("f-key")) { body.privateKeyPem = text("f-key"); }
    if (text("f-ca")) { body.serverCaPem = text("f-ca"); }
    if (text("f-fee-adg")) { body.feeAdgCode = text("f-fee-adg"); }
    try {
      await this.ctx.api.request("PUT", "/company/fiscal", body);
      $("fiscal-error").textContent = "";
      this.ctx.toast(this.ctx.T.saved);
      await this.load();
    } catch (error) { $("fiscal-error").textContent = this.ctx.explain(error); }
  }

  async call(path) {
    try {
      const answer = await this.ctx.api.post(path);
      $("fiscal-error").textContent = "";
      this.ctx.toast(this.ctx.T.fiscalOk + (answer.message ? " · " + answer.message : ""));
    } catch (error) { $("fiscal-error").textContent = this.ctx.explain(error); }
  }
}
