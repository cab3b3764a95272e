// The order form's address search (issue 27): what the dispatcher types is looked up in the offline
// address index (GET /geo/search, docs/routing.md) near the pin map's centre (the company's depot
// until the map moves); the answers are a listbox (a WAI-ARIA combobox: arrows, Enter, Escape, the
// mouse), and the one chosen is handed to onPick. Without an index (503: roads not built) the field
// says so and the form works as before: the pin is set by hand.
const DEBOUNCE_MS = 250;
const MIN_CHARS = 2;

export class AddressSearch {
  // input, list, status: the elements; near(): {lat, lon} or null; onPick(result).
  constructor(ctx, {input, list, status, near, onPick}) {
    Object.assign(this, {ctx, input, list, status, near, onPick});
    this.results = [];
    this.active = -1;
    this.asked = 0;  // the number of the latest query: an older answer arriving late is dropped
    this.timer = null;
    input.addEventListener("input", () => this.typed());
    input.addEventListener("keydown", (event) => this.key(event));
    input.addEventListener("blur", () => { setTimeout(() => this.close(), 150); });
    // mousedown keeps the focus in the field, so the click below lands on a list still open.
    list.addEventListener("mousedown", (event) => event.preventDefault());
    list.addEventListener("click", (event) => {
      const option = event.target.closest("[role=option]");
      if (option) { this.choose(Number(option.dataset.index)); }
    });
  }

  // A new form: an empty field, no list, no message.
  reset() {
    clearTimeout(this.timer);
    this.asked++;
    this.input.value = "";
    this.status.textContent = "";
    delete this.status.dataset.state;
    this.results = [];
    this.list.replaceChildren();
    this.close();
  }

  typed() {
    clearTimeout(this.timer);
    const query = this.input.value.trim();
    if (query.length < MIN_CHARS) { this.asked++; this.close(); return; }
    this.timer = setTimeout(() => this.ask(query), DEBOUNCE_MS);
  }

  async ask(query) {
    const T = this.ctx.T;
    const asked = ++this.asked;
    const near = this.near();
    const path = (at) => "/geo/search?q=" + encodeURIComponent(query) + "&limit=8" +
      (at ? "&near=" + at.lat.toFixed(6) + "," + at.lon.toFixed(6) : "");
    let answer;
    try {
      try {
        answer = await this.ctx.api.get(path(near));
      } catch (error) {  // a map moved outside the service area: ask without "near"
        if (error.status !== 422 || !near) { throw error; }
        answer = await this.ctx.api.get(path(null));
      }
    } catch (error) {
      if (asked !== this.asked) { return; }
      this.close();
      this.status.dataset.state = error.status === 503 ? "unavailable" : "failed";
      this.status.textContent = error.status === 503 ? T.addressSearchUnavailable : this.ctx.explain(error);
      return;
    }
    if (asked !== this.asked) { return; }
    this.results = answer.results;
    this.status.dataset.state = answer.results.length ? "found" : "none";
    this.status.textContent = answer.results.length ? "" : T.addressSearchNone;
    this.show();
  }

  show() {
    const T = this.ctx.T;
    this.active = this.results.length ? 0 : -1;
    this.list.replaceChildren(...this.results.map((result, index) => {
      const option = document.createElement("li");
      option.id = this.list.id + "-" + index;
      option.setAttribute("role", "option");
      option.dataset.index = String(index);
      option.dataset.kind = result.kind;
      const kind = document.createElement("span");
      kind.className = "muted small";
      kind.textContent = " · " + (T["geoKind_" + result.kind] || result.kind);
      option.append(result.label, kind);
      return option;
    }));
    this.list.hidden = !this.results.length;
    this.input.setAttribute("aria-expanded", String(!this.list.hidden));
    this.mark();
  }

  // The highlighted answer, for the eye (aria-selected) and for screen readers (activedescendant).
  mark() {
    [...this.list.children].forEach((option, index) => option.setAttribute("aria-selected", String(index === this.active)));
    if (this.active >= 0) {
      this.input.setAttribute("aria-activedescendant", this.list.id + "-" + this.active);
      this.list.children[this.active].scrollIntoView({block: "nearest"});
    } else { this.input.removeAttribute("aria-activedescendant"); }
  }

  key(event) {
    const open = !this.list.hidden && this.results.length > 0;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (!open) { if (this.results.length) { this.show(); } return; }
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      this.active = (this.active + step + this.results.length) % this.results.length;
      this.mark();
    } else if (event.key === "Enter") {
      event.preventDefault();  // Enter picks the answer; in this field it never submits the order
      if (open) { this.choose(this.active); }
    } else if (event.key === "Escape" && open) {
      event.preventDefault();  // closes the list, not the dialog
      this.close();
    }
  }

  choose(index) {
    const result = this.results[index];
    if (!result) { return; }
    this.input.value = result.label;
    this.close();
    this.onPick(result);
  }

  close() {
    this.list.hidden = true;
    this.active = -1;
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }
}
