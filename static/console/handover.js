// Hand a picked-up or arrived order to another courier (a phone died, a scooter broke):
// POST /orders/{id}/reassign {courierId}. The order keeps its status and goes to the end of the new
// courier's run; the new courier's app says who handed it over. The button shows only where the
// order's allowedMoves say reassign (the API's rule, not a copy).
const $ = (id) => document.getElementById(id);

export class Handover {
  constructor(ctx, board) {
    this.ctx = ctx; this.board = board;
    this.order = null;
    $("handover-close").addEventListener("click", () => $("handover-dialog").close());
    $("handover-form").addEventListener("submit", (event) => { event.preventDefault(); this.send(); });
  }

  open(order) {
    const T = this.ctx.T;
    this.order = order;
    $("handover-error").textContent = "";
    const from = this.ctx.fleet.couriers.get(order.courierId);
    $("handover-order").textContent = order.publicId + " · " + this.board.address(order) + (from ? " · " + T.handOverFrom + " " + from.displayName : "");
    const select = $("handover-courier");
    const option = (value, text) => { const o = document.createElement("option"); o.value = value; o.textContent = text; return o; };
    const others = this.board.byShift(this.ctx.fleet.list().filter((c) => c.active && c.id !== order.courierId));
    select.replaceChildren(option("", T.chooseCourier),
      ...others.map((c) => option(c.id, c.displayName + " · " + this.ctx.fleet.shiftLabel(c))));
    $("handover-dialog").showModal();
    select.focus();
  }

  async send() {
    const courierId = $("handover-courier").value;
    if (!courierId) { $("handover-courier").reportValidity(); return; }
    $("handover-save").disabled = true;
    try {
      const {order} = await this.ctx.api.post("/orders/" + this.order.id + "/reassign", {courierId: Number(courierId)});
      this.board.upsert(order);
      $("handover-dialog").close();
      this.ctx.toast(this.ctx.T.handedOver + " " + this.ctx.fleet.couriers.get(courierId).displayName);
    } catch (error) { $("handover-error").textContent = this.ctx.explain(error); }
    finally { $("handover-save").disabled = false; }
  }
}
