// Select all (the orders the board shows, its search and filters applied) and act on the chosen
// orders at once through POST /orders/bulk: make ready, assign to a courier, cancel with a reason,
// move to another day. The API changes each order in its own transaction and answers per order;
// the summary says how many moved and, for each that could not, why (the Problem's own words).
// One Idempotency-Key per click: a retried request (a lost answer) replays instead of acting twice.
const $ = (id) => document.getElementById(id);

function key() {
  if (window.crypto && crypto.randomUUID) { return crypto.randomUUID(); }
  return Date.now().toString(36) + Math.random().toString(36).slice(2);
}

export class Bulk {
  constructor(ctx, board) {
    this.ctx = ctx; this.board = board;
    $("select-all").addEventListener("change", () => this.selectAll($("select-all").checked));
    $("bulk-ready").addEventListener("click", () => this.run({action: "ready"}));
    $("bulk-assign").addEventListener("click", () => {
      if (!$("bulk-courier").value) { $("bulk-courier").focus(); return; }
      this.run({action: "assign", courierId: Number($("bulk-courier").value)});
    });
    $("bulk-cancel").addEventListener("click", () => {
      const reason = $("bulk-reason").value.trim();
      if (!reason) { $("bulk-reason").reportValidity(); $("bulk-reason").focus(); return; }
      this.run({action: "cancel", reason: reason});
    });
    $("bulk-move").addEventListener("click", () => {
      if (!$("bulk-date").value) { $("bulk-date").reportValidity(); $("bulk-date").focus(); return; }
      this.run({action: "move", date: $("bulk-date").value});
    });
    $("bulk-clear").addEventListener("click", () => this.selectAll(false));
  }

  // Every order shown (not the ones the search or a filter hides) is chosen, or none is.
  selectAll(on) {
    const shown = this.board.shown || [];
    if (on) { shown.forEach((o) => this.board.selected.add(o.id)); } else { this.board.selected.clear(); }
    this.board.render();
  }

  render() {
    const T = this.ctx.T;
    const shown = this.board.shown || [];
    const chosen = this.board.selectedIds();
    const all = $("select-all");
    const shownChosen = shown.filter((o) => this.board.selected.has(o.id)).length;
    all.checked = shown.length > 0 && shownChosen === shown.length;
    all.indeterminate = shownChosen > 0 && shownChosen < shown.length;
    all.setAttribute("aria-label", T.selectAll + " (" + shown.length + ")");
    $("bulk-bar").hidden = chosen.length === 0;
    $("bulk-count").textContent = T.chosenCount.replace("{n}", String(chosen.length));
    const select = $("bulk-courier");
    const before = select.value;
    const couriers = this.ctx.fleet ? this.ctx.fleet.list().filter((c) => c.active) : [];
    const option = (value, text) => { const o = document.createElement("option"); o.value = value; o.textContent = text; return o; };
    select.replaceChildren(option("", T.chooseCourier), ...couriers.map((c) => option(c.id, c.displayName)));
    select.value = before;
  }

  async run(request) {
    const T = this.ctx.T;
    const ids = this.board.selectedIds();
    if (!ids.length) { return; }
    const buttons = document.querySelectorAll("#bulk-bar button");
    buttons.forEach((b) => { b.disabled = true; });
    $("bulk-summary").textContent = T.working;
    try {
      const answer = await this.ctx.api.request("POST", "/orders/bulk", Object.assign({orderIds: ids.map(Number)}, request),
                                                {headers: {"Idempotency-Key": key()}});
      this.show(request.action, answer.results);
      await this.board.load();
    } catch (error) { $("bulk-summary").textContent = this.ctx.explain(error); }
    finally { buttons.forEach((b) => { b.disabled = false; }); }
  }

  // "28 of 31 made ready. 3 could not: A-1 (why) …", each failure on its own line, kept chosen so
  // that another action can follow; the ones that moved are let go.
  show(action, results) {
    const T = this.ctx.T;
    const done = results.filter((r) => r.ok), failed = results.filter((r) => !r.ok);
    const box = $("bulk-summary");
    const head = document.createElement("p");
    head.dataset.bulkDone = String(done.length);
    head.dataset.bulkFailed = String(failed.length);
    head.textContent = T["bulkDone_" + action].replace("{n}", String(done.length)).replace("{of}", String(results.length)) +
      (failed.length ? " " + T.bulkFailed.replace("{n}", String(failed.length)) : "");
    const list = document.createElement("ul");
    list.className = "plain small";
    failed.forEach((r) => {
      const order = this.board.orders.get(r.orderId);
      const li = document.createElement("li");
      li.dataset.bulkProblem = r.orderId;
      const problem = r.problem || {};
      li.textContent = (order ? order.publicId : "#" + r.orderId) + " · " + (problem.detail || problem.title || problem.status);
      list.append(li);
    });
    box.replaceChildren(head, list);
    done.forEach((r) => this.board.selected.delete(r.orderId));
  }
}
