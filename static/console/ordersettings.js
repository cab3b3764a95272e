// The company's order settings in the Company view (GET and PATCH /company/order-settings,
// docs/orders.md): what imported orders arrive as, whether the shops' key orders arrive ready, and
// the proof every delivery needs unless its order or its shop's key says otherwise. The API lets
// dispatchers read them and only owners change them, so a dispatcher sees the form read-only.
// Save sends only the fields that changed; a refusal is shown as its Problem beside the form.
// Its words: the ORDER_SETTINGS_TEXTS block of texts.js.
export const PROOF_KINDS = ["photo", "signature", "code", "scan", "name", "age"];

const $ = (id) => document.getElementById(id);

export class OrderSettings {
  constructor(ctx) {
    this.ctx = ctx;
    this.settings = null;  // as the server last answered
    $("order-settings-form").addEventListener("submit", (event) => { event.preventDefault(); this.save(); });
    // A change after a save makes the "saved" line stale.
    $("order-settings-form").addEventListener("change", () => { $("order-settings-state").textContent = ""; });
  }

  get owner() { return Boolean(this.ctx.session) && this.ctx.session.role === "owner"; }

  proofBoxes() { return [...$("os-proof").querySelectorAll("input[data-proof]")]; }

  async load() {
    $("order-settings-error").textContent = "";
    $("order-settings-state").textContent = "";
    // Shown once what is saved is in it (as the e-HDM form): a choice made before the answer came
    // would be overwritten by it.
    try {
      this.fill(await this.ctx.api.get("/company/order-settings"));
    } catch (error) { $("order-settings-error").textContent = this.ctx.explain(error); }
    $("order-settings-form").hidden = false;
  }

  fill(settings) {
    this.settings = settings;
    $("os-import").value = settings.importStatus;
    $("os-integration-ready").checked = settings.integrationOrdersReady;
    this.proofBoxes().forEach((box) => { box.checked = settings.proofRequired.includes(box.dataset.proof); });
    // PATCH is the owners' (guard O): anyone else reads the settings and changes nothing.
    const readOnly = !this.owner;
    $("order-settings-form").dataset.readOnly = String(readOnly);
    [$("os-import"), $("os-integration-ready"), ...this.proofBoxes()].forEach((control) => { control.disabled = readOnly; });
    $("os-save").hidden = readOnly;
    $("os-owners-only").hidden = !readOnly;
  }

  // What the form says now, in the API's shape (proof kinds in their canonical order).
  current() {
    return {
      importStatus: $("os-import").value,
      integrationOrdersReady: $("os-integration-ready").checked,
      proofRequired: PROOF_KINDS.filter((kind) => this.proofBoxes().some((box) => box.dataset.proof === kind && box.checked)),
    };
  }

  // Only what differs from the server's last answer.
  changes() {
    const now = this.current(), before = this.settings;
    const body = {};
    if (now.importStatus !== before.importStatus) { body.importStatus = now.importStatus; }
    if (now.integrationOrdersReady !== before.integrationOrdersReady) { body.integrationOrdersReady = now.integrationOrdersReady; }
    const had = PROOF_KINDS.filter((kind) => before.proofRequired.includes(kind));
    if (now.proofRequired.join(",") !== had.join(",")) { body.proofRequired = now.proofRequired; }
    return body;
  }

  async save() {
    if (!this.settings || !this.owner) { return; }
    const T = this.ctx.T;
    const body = this.changes();
    if (!Object.keys(body).length) { $("order-settings-state").textContent = T.osUnchanged; return; }
    try {
      this.fill(await this.ctx.api.patch("/company/order-settings", body));
      $("order-settings-error").textContent = "";
      $("order-settings-state").textContent = T.saved;
      this.ctx.toast(T.saved);
    } catch (error) {
      $("order-settings-state").textContent = "";
      $("order-settings-error").textContent = this.ctx.explain(error);
    }
  }
}
