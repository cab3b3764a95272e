// Imported drafts that need a pin (issue 46): an import row whose address the index could not
// place is kept as a draft at a stand-in pin with the reason in order.needsPin. This module shows
// how many of the day's orders wait for a pin, lists them with the reason when pressed (and then
// filters the board's rows to them: board.needsPinOnly), and opens the order form with its pin map
// for each ("Drop the pin": saving the pin clears needsPin). It follows the board's renders, and
// changes the board only through that one flag; it carries its own words in the three languages.
const $ = (id) => document.getElementById(id);

const WORDS = {
  hy: {needsPin: "Կետ է պետք", dropPin: "Նշել կետը քարտեզին", title: "Պատվերներ, որոնց հասցեն չի գտնվել"},
  ru: {needsPin: "Нужна точка", dropPin: "Поставить точку на карте", title: "Заказы, чей адрес не найден"},
  en: {needsPin: "Needs a pin", dropPin: "Drop the pin on the map", title: "Orders whose address was not found"},
};

export class Pins {
  constructor(ctx, board) {
    this.ctx = ctx;
    this.board = board;
    this.open = false;
    // Pressed, the chip also filters the board to those rows; the board then renders (and so updates this).
    $("pin-needed-toggle").addEventListener("click", () => {
      this.open = !this.open;
      board.needsPinOnly = this.open;
      board.render();
    });
    const render = board.render.bind(board);
    board.render = (...args) => { const answer = render(...args); this.update(); return answer; };
  }

  waiting() {
    return [...this.board.orders.values()].filter((o) => o.needsPin && o.status === "draft");
  }

  update() {
    const W = WORDS[this.ctx.lang] || WORDS.en;
    const orders = this.waiting();
    const toggle = $("pin-needed-toggle");
    $("pin-needed").hidden = orders.length === 0;
    toggle.textContent = W.needsPin + " · " + orders.length;
    toggle.setAttribute("aria-pressed", String(this.open && orders.length > 0));
    if (this.board.needsPinOnly && orders.length === 0) {  // the last pin dropped: the whole day again
      this.open = false;
      this.board.needsPinOnly = false;
      queueMicrotask(() => this.board.render());
    }
    const list = $("pin-needed-list");
    list.hidden = !this.open || orders.length === 0;
    list.setAttribute("aria-label", W.title);
    list.replaceChildren(...orders.map((order) => {
      const item = document.createElement("li");
      item.dataset.orderId = order.id;
      const what = document.createElement("span");
      what.textContent = order.publicId + " · " + order.recipientName + " · " + order.addressLabelHy;
      const why = document.createElement("span");
      why.className = "muted small";
      why.textContent = " — " + order.needsPin;
      const drop = document.createElement("button");
      drop.type = "button";
      drop.className = "ghost";
      drop.textContent = W.dropPin;
      drop.addEventListener("click", () => this.board.openCreate(order));
      item.append(what, why, " ", drop);
      return item;
    }));
  }
}
