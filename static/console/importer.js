// Import a day's orders (POST /orders/import): drop or choose a CSV or .xlsx file, see the dry
// run's counts and every refused row (row, the file's own column header, problem) and every row
// kept as a draft that needs a pin, then confirm to import. The file is sent as multipart/form-data
// field "file" both times; the server tells CSV from .xlsx, and writes its problems in the
// console's language (Accept-Language).
import {ApiError} from "/static/js/api.js";

const $ = (id) => document.getElementById(id);

// A kept row's note, beside the server's reason (already in the console's language).
const NEEDS_PIN = {hy: "Պահված է որպես սևագիր, կետ է պետք", ru: "Сохранён черновиком, нужна точка", en: "Kept as a draft, needs a pin"};

function cell(text) { const td = document.createElement("td"); td.textContent = text; return td; }

export class Importer {
  constructor(ctx, reload) {
    this.ctx = ctx;
    this.reload = reload;
    this.file = null;
    $("import-orders").addEventListener("click", () => this.open());
    $("import-close").addEventListener("click", () => $("import-dialog").close());
    $("import-file").addEventListener("change", () => { const file = $("import-file").files[0]; if (file) { this.preview(file); } });
    const drop = $("import-drop");
    drop.addEventListener("dragover", (event) => { event.preventDefault(); drop.classList.add("over"); });
    drop.addEventListener("dragleave", () => drop.classList.remove("over"));
    drop.addEventListener("drop", (event) => {
      event.preventDefault(); drop.classList.remove("over");
      const file = event.dataTransfer.files[0];
      if (file) { this.preview(file); }
    });
    $("import-confirm").addEventListener("click", () => this.confirm());
  }

  open() {
    this.file = null;
    $("import-file").value = "";
    $("import-summary").textContent = "";
    $("import-error").textContent = "";
    $("import-problems").hidden = true;
    $("import-problems").querySelector("tbody").replaceChildren();
    $("import-confirm").disabled = true;
    $("import-dialog").showModal();
  }

  // The file as multipart/form-data with the bearer token; one refresh and retry on 401, as the
  // JSON requests of /static/js/api.js do.
  async send(file, dryRun) {
    const api = this.ctx.api;
    for (let attempt = 0; ; attempt++) {
      const body = new FormData();
      body.append("file", file, file.name);
      let response;
      try {
        response = await fetch("/orders/import" + (dryRun ? "?dryRun=true" : ""), {
          method: "POST", body: body, cache: "no-store",
          headers: {"Authorization": await api.authorization(), "Accept-Language": this.ctx.lang}});
      } catch (error) { throw Object.assign(new Error(String(error)), {offline: true}); }
      if (response.status === 401 && attempt === 0) { await api.refresh(); continue; }
      const data = await response.json().catch(() => null);
      if (!response.ok) { throw new ApiError(response.status, data); }
      return data;
    }
  }

  show(result, dryRun) {
    const T = this.ctx.T;
    const rows = new Set(result.refused.map((r) => r.row)).size;
    $("import-summary").textContent = (dryRun ? T.importWould : T.importDone) + result.created + " · " +
      T.importExisting + result.existing + " · " + T.importRefused + rows;
    const body = $("import-problems").querySelector("tbody");
    body.replaceChildren(...result.refused.map((r) => {
      const tr = document.createElement("tr");
      tr.dataset.row = String(r.row);
      tr.append(cell(String(r.row)), cell(r.header || r.column || ""), cell(r.message));
      return tr;
    }), ...(result.needsPin || []).map((r) => {
      const tr = document.createElement("tr");
      tr.dataset.row = String(r.row);
      tr.className = "needs-pin";
      tr.append(cell(String(r.row)), cell(r.header || ""), cell(NEEDS_PIN[this.ctx.lang] + ": " + r.message));
      return tr;
    }));
    $("import-problems").hidden = result.refused.length === 0 && !(result.needsPin || []).length;
  }

  async preview(file) {
    const T = this.ctx.T;
    this.file = file;
    $("import-error").textContent = "";
    $("import-confirm").disabled = true;
    $("import-summary").textContent = file.name + " · " + T.importChecking;
    try {
      const result = await this.send(file, true);
      this.show(result, true);
      $("import-confirm").disabled = result.created === 0;
    } catch (error) {
      $("import-summary").textContent = file.name;
      $("import-error").textContent = this.ctx.explain(error);
    }
  }

  async confirm() {
    const T = this.ctx.T;
    if (!this.file) { return; }
    $("import-confirm").disabled = true;
    try {
      const result = await this.send(this.file, false);
      this.show(result, false);
      this.ctx.toast(T.importDone + result.created);
      await this.reload();
      if (result.refused.length === 0) { $("import-dialog").close(); }
    } catch (error) {
      $("import-error").textContent = this.ctx.explain(error);
      $("import-confirm").disabled = false;
    }
  }
}
