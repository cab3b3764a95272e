// Route plans: suggest for the chosen couriers and orders (none chosen: all ready orders and the
// active couriers on shift), with the capacity each courier uses, lanes with arrival times and the routes on the map, move a stop by drag and drop
// (POST /plans/move-stop re-times every lane), recompute, and apply (one transaction in the API;
// a stale plan changes nothing). Nothing is written until apply.
// Steered by the dispatcher (issue 45): the day planned (today, tomorrow or any later day: the
// board shows that day), the stops per courier for everyone, and per courier its own limit, shift
// and start (the plan's `couriers`); stops kept in place on the next suggestion (`locked`);
// lateness allowed; and every order left out listed with its address, window and reason.
import {timeOf, yerevanDate} from "/static/js/i18n.js";
import {LANE_COLOURS} from "/console/livemap.js";

const $ = (id) => document.getElementById(id);

export class Planner {
  constructor(ctx, board, fleet) {
    this.ctx = ctx; this.board = board; this.fleet = fleet;
    this.settings = new Map();  // courierId -> {capacity, shiftStart, shiftEnd, start}, typed by the dispatcher
    this.locked = new Set();    // orderIds kept at their lane and place on the next suggestion
    this.reset();
    $("plan-suggest").addEventListener("click", () => this.suggest());
    $("plan-apply").addEventListener("click", () => this.apply());
    $("plan-recompute").addEventListener("click", () => this.recompute());
    $("plan-discard").addEventListener("click", () => { this.reset(); });
    $("plan-day").addEventListener("change", () => this.chooseDay());
    $("plan-date").addEventListener("change", () => this.showDay($("plan-date").value));
    $("day-date").addEventListener("change", () => this.followBoard());
    $("plan-all-couriers").addEventListener("change", () => {
      const on = $("plan-all-couriers").checked;
      this.fleet.list().filter((c) => c.active).forEach((c) => { if (on) { this.fleet.chosen.add(c.id); } else { this.fleet.chosen.delete(c.id); } });
      this.fleet.render(); this.renderCouriers();
    });
  }

  // The plan's day is the board's: today, tomorrow or a day picked; the board loads that day so its
  // orders can be chosen and its stop numbers seen.
  chooseDay() {
    const choice = $("plan-day").value;
    $("plan-date-box").hidden = choice !== "pick";
    if (choice === "pick") { $("plan-date").value = $("day-date").value; $("plan-date").focus(); return; }
    const day = new Date();
    if (choice === "tomorrow") { day.setTime(day.getTime() + 24 * 3600 * 1000); }
    this.showDay(yerevanDate(day));
  }

  showDay(day) {
    if (!day || $("day-date").value === day) { return; }
    $("day-date").value = day;
    this.reset();
    this.board.load().catch((error) => this.ctx.fail(error));
  }

  followBoard() {
    const day = $("day-date").value;
    if (this.plan) { this.reset(); }  // a plan shown was for the day the board showed before
    const today = yerevanDate(), tomorrow = yerevanDate(new Date(Date.now() + 24 * 3600 * 1000));
    $("plan-day").value = day === today ? "today" : day === tomorrow ? "tomorrow" : "pick";
    $("plan-date-box").hidden = $("plan-day").value !== "pick";
    $("plan-date").value = day;
  }

  planDate() { return $("day-date").value || yerevanDate(); }

  // One row per active courier: chosen for the plan (the same choice as the couriers' list), and
  // their own stops, shift and start; an empty field takes the plan-wide value.
  renderCouriers() {
    const body = document.querySelector("#plan-couriers tbody");
    if (!body) { return; }
    const couriers = this.fleet.list().filter((c) => c.active);
    const chosen = new Set(this.fleet.chosenIds());
    const all = $("plan-all-couriers");
    all.checked = couriers.length > 0 && couriers.every((c) => chosen.has(c.id));
    all.indeterminate = !all.checked && couriers.some((c) => chosen.has(c.id));
    // The rows are rebuilt only when the couriers change (a location update every few seconds must
    // not drop what is being typed); otherwise only the choice and the plan-wide hint follow.
    const shape = couriers.map((c) => c.id + ":" + c.displayName).join("|") + "|" + this.ctx.lang;
    if (body.dataset.shape !== shape) {
      body.dataset.shape = shape;
      body.replaceChildren(...couriers.map((courier) => this.courierRow(courier)));
    }
    body.querySelectorAll("[data-plan-choose]").forEach((pick) => { pick.checked = chosen.has(pick.dataset.planChoose); });
    body.querySelectorAll("[data-plan-field='capacity']").forEach((input) => { input.placeholder = $("plan-capacity").value; });
  }

  courierRow(courier) {
    const T = this.ctx.T;
    const mine = this.settings.get(courier.id) || {};
    const tr = document.createElement("tr");
    tr.dataset.planCourier = courier.id;
    const cell = (child) => { const td = document.createElement("td"); td.append(child); return td; };
    const input = (field, type, label, attributes) => {
      const element = document.createElement(field === "start" ? "select" : "input");
      if (field === "start") {
        [["", "—"], ["gps", T.startGps], ["depot", T.startDepot]].forEach(([value, text]) => {
          const option = document.createElement("option"); option.value = value; option.textContent = text; element.append(option);
        });
      } else { element.type = type; Object.assign(element, attributes || {}); }
      element.value = mine[field] || "";
      element.dataset.planField = field;
      element.setAttribute("aria-label", label + " · " + courier.displayName);
      element.addEventListener("change", () => {
        this.settings.set(courier.id, Object.assign({}, this.settings.get(courier.id) || {}, {[field]: element.value}));
        // A courier given a limit of their own is meant to be in the plan.
        if (element.value && !this.fleet.chosen.has(courier.id)) { this.fleet.chosen.add(courier.id); this.fleet.render(); this.renderCouriers(); }
      });
      return element;
    };
    const pick = document.createElement("input");
    pick.type = "checkbox";
    pick.dataset.planChoose = courier.id;
    pick.setAttribute("aria-label", T.choose + " " + courier.displayName);
    pick.addEventListener("change", () => {
      if (pick.checked) { this.fleet.chosen.add(courier.id); } else { this.fleet.chosen.delete(courier.id); }
      this.fleet.render(); this.renderCouriers();
    });
    // Narrow enough for the side column at 1,280 px: the choice with the name, the shift's two
    // times one above the other.
    const name = document.createElement("label");
    name.className = "check-name";
    name.append(pick, " ", courier.displayName);
    const shift = document.createElement("div");
    shift.className = "shift-times";
    shift.append(input("shiftStart", "time", T.shiftFrom), input("shiftEnd", "time", T.shiftUntil));
    tr.append(cell(name), cell(input("capacity", "number", T.maxStops, {min: 1, max: 200})), cell(shift), cell(input("start", null, T.startAt)));
    return tr;
  }

  // What the dispatcher set, as POST /plans/suggest's optional fields.
  steering(orders, couriers) {
    const body = {date: this.planDate(), capacity: parseInt($("plan-capacity").value || "10", 10), late: $("plan-late").checked ? "allow" : "forbid"};
    const own = couriers.map((id) => {
      const mine = this.settings.get(id) || {};
      const entry = {courierId: Number(id)};
      if (mine.capacity) { entry.capacity = parseInt(mine.capacity, 10); }
      if (mine.shiftStart) { entry.shiftStart = mine.shiftStart; }
      if (mine.shiftEnd) { entry.shiftEnd = mine.shiftEnd; }
      if (mine.start) { entry.start = mine.start; }
      return entry;
    });
    if (own.some((entry) => Object.keys(entry).length > 1)) { body.couriers = own; }
    // Locked stops stay in their lane at their place: the plan shown says where that is.
    if (this.plan && this.locked.size) {
      const locked = [];
      this.plan.routes.forEach((route) => route.stops.forEach((stop, index) => {
        if (this.locked.has(stop.orderId)) { locked.push({orderId: Number(stop.orderId), courierId: Number(route.courierId), index: index}); }
      }));
      if (locked.length) {
        body.locked = locked;
        // A lock names an order and a courier the plan holds.
        if (orders.length) { locked.forEach((l) => { if (!orders.includes(String(l.orderId))) { orders.push(String(l.orderId)); } }); }
        if (couriers.length) { locked.forEach((l) => { if (!couriers.includes(String(l.courierId))) { couriers.push(String(l.courierId)); } }); }
      }
    }
    return body;
  }

  // Each request of the planner runs after the one before it, and an answer that arrives after the
  // plan was applied or discarded is dropped: a slow recompute must not bring back an applied plan.
  queue(work) {
    const generation = this.generation;
    const run = this.pending.then(() => (generation === this.generation ? work(generation) : undefined));
    const settled = run.catch(() => undefined);
    this.pending = settled;
    document.body.dataset.planBusy = "true";
    settled.then(() => { if (this.pending === settled) { delete document.body.dataset.planBusy; } });
    return run;
  }

  reset() {
    this.generation = (this.generation || 0) + 1;
    this.pending = this.pending || Promise.resolve();
    this.plan = null;
    this.load = new Map();
    this.unassigned = [];
    this.unplaced = new Map();
    this.computedAt = null;
    this.timesFrom = null;
    if (this.locked) { this.locked.clear(); }
    if (this.fleet && this.fleet.map) { this.fleet.map.setRoutes([]); }
    if ($("plan-lanes")) { this.render(); $("plan-status").textContent = ""; }
  }

  async suggest() {
    const T = this.ctx.T;
    const orders = this.board.selectedIds(), couriers = this.fleet.chosenIds();
    const body = this.steering(orders, couriers);
    if (orders.length) { body.orderIds = orders.map(Number); }
    if (couriers.length) { body.courierIds = couriers.map(Number); }
    $("plan-status").textContent = T.planning;
    $("plan-suggest").disabled = true;
    try {
      const suggestion = await this.ctx.api.post("/plans/suggest", body);
      this.load = new Map(suggestion.routes.map((r) => [r.courierId, {held: r.held, capacity: r.capacity}]));
      this.unplaced = new Map((suggestion.unplaced || []).map((u) => [u.orderId, u.reason]));
      // Arrival times count from the answer's timesFrom (a later day: its midnight), else from now.
      this.timesFrom = suggestion.timesFrom ? new Date(suggestion.timesFrom).getTime() : null;
      this.take(suggestion, suggestion.unassigned);
      this.timesFrom = null;  // set again by the next suggestion; recompute and move-stop time from now
    } catch (error) { $("plan-status").textContent = this.ctx.explain(error); }
    finally { $("plan-suggest").disabled = false; }
  }

  take(plan, unassigned, generation) {
    if (generation !== undefined && generation !== this.generation) { return; }
    this.plan = plan;
    this.unassigned = unassigned || this.unassigned;
    this.computedAt = this.timesFrom || Date.now();
    $("plan-status").textContent = plan.method === "straight_line" ? this.ctx.T.straight : this.ctx.T.moveHint;
    document.body.dataset.plan = "shown";
    this.render();
    this.draw();
  }

  draft() {
    return {routes: this.plan.routes.map((r) => ({courierId: r.courierId, stops: r.stops.map((s) => ({orderId: s.orderId}))}))};
  }

  moveStop(orderId, toCourierId, toIndex) {
    return this.queue(async (generation) => {
      try {
        const body = {plan: this.draft(), orderId: orderId, toCourierId: toCourierId};
        if (toIndex !== null && toIndex !== undefined) { body.toIndex = toIndex; }
        this.take(await this.ctx.api.post("/plans/move-stop", body), undefined, generation);
      } catch (error) { this.ctx.fail(error); }
    });
  }

  // Re-time every lane along its sequence from now (the courier may have moved, time has passed).
  recompute() {
    return this.queue(async (generation) => {
      try {
        this.take(await this.ctx.api.post("/plans/recompute", this.draft()), undefined, generation);
      } catch (error) { this.ctx.fail(error); }
    });
  }

  apply() { return this.queue(() => this.applyNow()); }

  async applyNow() {
    const T = this.ctx.T;
    if (!this.plan) { return; }
    const routes = this.plan.routes.filter((r) => r.stops.length).map((r) => ({
      courierId: Number(r.courierId), stops: r.stops.map((s, i) => ({orderId: Number(s.orderId), sequence: i + 1}))}));
    try {
      await this.ctx.api.post("/plans/apply", {routes: routes});
      this.reset();
      this.board.selected.clear();
      document.body.dataset.plan = "applied";
      $("plan-status").textContent = T.applied;
      this.ctx.toast(T.applied);
      await this.board.load();
    } catch (error) {
      $("plan-status").textContent = error.status === 409 ? T.stale : this.ctx.explain(error);
    }
  }

  reason(orderId) {
    const T = this.ctx.T;
    const given = this.unplaced && this.unplaced.get(orderId);
    if (given) { return T["unplacedReason_" + given] || given; }
    const order = this.board.orders.get(orderId);
    return order && order.status !== "ready" ? T.notReady : T.didNotFit;
  }

  render() {
    const T = this.ctx.T;
    const box = $("plan-lanes");
    if (!box) { return; }
    this.renderCouriers();
    $("plan-apply").hidden = !this.plan;
    $("plan-recompute").hidden = !this.plan;
    $("plan-discard").hidden = !this.plan;
    if (!this.plan) { box.replaceChildren(); return; }
    // Every courier a stop can go to: the plan's lanes and the chosen couriers without one.
    const couriers = [...new Set([...this.plan.routes.map((r) => r.courierId), ...this.fleet.chosenIds()])];
    const lanes = this.plan.routes.map((route, index) => {
      const courier = this.fleet.couriers.get(route.courierId);
      const lane = document.createElement("div");
      lane.className = "lane";
      lane.dataset.lane = route.courierId;
      const title = document.createElement("h3");
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = LANE_COLOURS[index % LANE_COLOURS.length];
      title.append(swatch, courier ? courier.displayName : "#" + route.courierId);
      // Capacity used: the open orders the courier already holds plus this lane's stops, of the
      // suggestion's capacity (kept across moves and recomputes, which do not repeat it).
      const load = this.load.get(route.courierId);
      if (load) {
        const used = load.held + route.stops.length;
        const badge = document.createElement("span");
        badge.className = "badge" + (used > load.capacity ? " risk" : "");
        badge.dataset.capacity = used + "/" + load.capacity;
        badge.textContent = T.capacityUsed + " " + used + "/" + load.capacity;
        title.append(" ", badge);
      }
      const list = document.createElement("ol");
      route.stops.forEach((stop, position) => {
        const order = this.board.orders.get(stop.orderId);
        const li = document.createElement("li");
        li.draggable = true;
        li.tabIndex = 0;
        li.dataset.stop = stop.orderId;
        // expectedAt counts the waits for windows along the lane (the road estimate etaSeconds does not).
        const at = stop.expectedAt || (stop.etaSeconds === null ? null : new Date(this.computedAt + stop.etaSeconds * 1000).toISOString());
        const eta = at === null ? "" : " · " + T.arrival + " " + timeOf(at, this.ctx.lang);
        const label = order ? order.publicId : "#" + stop.orderId;
        const late = stop.lateSeconds ? " · " + T.lateBy + " " + Math.ceil(stop.lateSeconds / 60) + " " + T.minutesShort : "";
        const text = document.createElement("span");
        text.textContent = label + (order ? " · " + this.board.address(order) : "") + eta + late;
        if (stop.lateSeconds) { li.dataset.late = String(stop.lateSeconds); }
        const lock = document.createElement("button");
        lock.type = "button"; lock.className = "small ghost lock";
        lock.dataset.lock = stop.orderId;
        lock.textContent = "📌";
        lock.title = T.lockStop;
        lock.setAttribute("aria-label", T.lockStop + " " + label);
        lock.setAttribute("aria-pressed", String(this.locked.has(stop.orderId)));
        lock.addEventListener("click", () => {
          if (this.locked.has(stop.orderId)) { this.locked.delete(stop.orderId); } else { this.locked.add(stop.orderId); }
          lock.setAttribute("aria-pressed", String(this.locked.has(stop.orderId)));
        });
        li.append(text, " ", this.moveSelect(stop.orderId, route.courierId, label, couriers), " ", lock);
        li.setAttribute("aria-label", text.textContent + ". " + T.keyboardMove);
        // Without a mouse: arrow keys move the focused stop up or down its lane (move-stop).
        li.addEventListener("keydown", (event) => {
          if (event.target !== li) { return; }
          const to = event.key === "ArrowUp" ? position - 1 : event.key === "ArrowDown" ? position + 1 : null;
          if (to === null || to < 0 || to >= route.stops.length) { return; }
          event.preventDefault();
          this.focusStop = stop.orderId;
          this.moveStop(stop.orderId, route.courierId, to);
        });
        li.addEventListener("dragstart", (event) => { event.dataTransfer.setData("text/plain", stop.orderId); event.dataTransfer.effectAllowed = "move"; });
        li.addEventListener("drop", (event) => {
          event.preventDefault(); event.stopPropagation(); lane.classList.remove("drop");
          this.moveStop(event.dataTransfer.getData("text/plain"), route.courierId, position);
        });
        li.addEventListener("dragover", (event) => event.preventDefault());
        list.append(li);
      });
      lane.addEventListener("dragover", (event) => { event.preventDefault(); lane.classList.add("drop"); });
      lane.addEventListener("dragleave", () => lane.classList.remove("drop"));
      lane.addEventListener("drop", (event) => {
        event.preventDefault(); lane.classList.remove("drop");
        this.moveStop(event.dataTransfer.getData("text/plain"), route.courierId, null);
      });
      lane.append(title, list);
      return lane;
    });
    // Couriers chosen but without a lane can still receive a dragged stop.
    const laneIds = new Set(this.plan.routes.map((r) => r.courierId));
    this.fleet.chosenIds().filter((id) => !laneIds.has(id)).forEach((id) => {
      const lane = document.createElement("div");
      lane.className = "lane"; lane.dataset.lane = id;
      const title = document.createElement("h3");
      title.textContent = this.fleet.couriers.get(id).displayName;
      lane.append(title, document.createElement("ol"));
      lane.addEventListener("dragover", (event) => { event.preventDefault(); lane.classList.add("drop"); });
      lane.addEventListener("dragleave", () => lane.classList.remove("drop"));
      lane.addEventListener("drop", (event) => { event.preventDefault(); this.moveStop(event.dataTransfer.getData("text/plain"), id, null); });
      lanes.push(lane);
    });
    if (this.unassigned.length) {
      const lane = document.createElement("div");
      lane.className = "lane"; lane.dataset.lane = "unassigned";
      const title = document.createElement("h3");
      title.textContent = T.unassignedStops;
      const list = document.createElement("ul");
      this.unassigned.forEach((orderId) => {
        const order = this.board.orders.get(orderId);
        const li = document.createElement("li");
        li.dataset.unassigned = orderId;
        if (this.unplaced.get(orderId)) { li.dataset.reason = this.unplaced.get(orderId); }
        const window = order && (order.deliveryWindowStart || order.deliveryWindowEnd)
          ? timeOf(order.deliveryWindowStart, this.ctx.lang) + "–" + timeOf(order.deliveryWindowEnd, this.ctx.lang) : T.noWindow;
        li.textContent = order
          ? order.publicId + " · " + this.board.address(order) + " · " + window + " · " + this.reason(orderId)
          : "#" + orderId + " · " + this.reason(orderId);
        list.append(li);
      });
      lane.append(title, list);
      lanes.push(lane);
    }
    box.replaceChildren(...lanes);
    if (this.focusStop) {  // keep the keyboard where it was after a move
      const moved = box.querySelector("[data-stop='" + this.focusStop + "']");
      this.focusStop = null;
      if (moved) { moved.focus(); }
    }
  }

  // The drag and drop of a stop onto another courier's lane, as a list for the keyboard.
  moveSelect(orderId, courierId, label, couriers) {
    const select = document.createElement("select");
    select.className = "small";
    select.dataset.moveTo = orderId;
    select.setAttribute("aria-label", this.ctx.T.moveTo + " " + label);
    couriers.forEach((id) => {
      const courier = this.fleet.couriers.get(id);
      const option = document.createElement("option");
      option.value = id;
      option.textContent = courier ? courier.displayName : "#" + id;
      option.selected = id === courierId;
      select.append(option);
    });
    select.addEventListener("change", () => { this.focusStop = orderId; this.moveStop(orderId, select.value, null); });
    return select;
  }

  // Each lane on the map along the roads (POST /geo/route, at most 25 points at a time), straight
  // between the points when routing cannot answer.
  async draw() {
    const map = this.fleet.map;
    if (!map || !this.plan) { return; }
    const plan = this.plan;
    const lines = await Promise.all(plan.routes.map(async (route, index) => {
      const points = [{lat: route.start.lat, lon: route.start.lon}];
      route.stops.forEach((s) => { const o = this.board.orders.get(s.orderId); if (o) { points.push(o.pin); } });
      let coordinates = points.map((p) => [p.lon, p.lat]);
      if (points.length >= 2 && points.length <= 25 && window.decodePolyline) {
        try {
          const answer = await this.ctx.api.post("/geo/route", {coordinates: points});
          if (answer.routes.length && answer.routes[0].geometry) { coordinates = window.decodePolyline(answer.routes[0].geometry, 6); }
        } catch (error) { /* straight lines */ }
      }
      return {colour: LANE_COLOURS[index % LANE_COLOURS.length], coordinates: coordinates};
    }));
    if (this.plan === plan) { map.setRoutes(lines); }
  }
}
