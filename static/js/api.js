// The JSON API client of the console and the courier app (ES module, no build step).
//
// Tokens: the access token lives in memory only; the refresh token is kept in the storage the page
// chooses (the console: sessionStorage, gone with the tab; the courier app: localStorage, so that an
// installed app stays signed in), because the API needs it back to rotate the session. Rotation is
// single-flight: one POST /auth/refresh at a time, shortly before the access token expires (a
// minute, or a fifth of a short lifetime) or on a 401, and the rotated pair replaces the old one at
// once (a rotated-out token that comes back ends the whole session, so it is never sent twice).

export class ApiError extends Error {
  constructor(status, problem) {
    super((problem && (problem.detail || problem.title)) || ("HTTP " + status));
    this.status = status;
    this.problem = problem || {};
    this.code = this.problem.code || null;
  }
}

export class OfflineError extends Error {
  constructor(cause) { super("offline"); this.cause = cause; this.offline = true; }
}

export class Api {
  // storage: sessionStorage or localStorage; key: where the refresh token is kept;
  // onSession(session): called after every sign-in, refresh and switch; onSignedOut(): when the
  // session is gone (sign-out, revoked, expired).
  constructor({storage, key, onSession, onSignedOut}) {
    this.storage = storage;
    this.key = key;
    this.onSession = onSession || function () {};
    this.onSignedOut = onSignedOut || function () {};
    this.session = null;
    this.accessToken = null;
    this.expiresAt = 0;
    this.refreshing = null;
    this.timer = null;
  }

  storedRefreshToken() {
    try {
      const kept = JSON.parse(this.storage.getItem(this.key) || "null");
      return kept && kept.refreshToken ? kept.refreshToken : null;
    } catch (e) { return null; }
  }

  _keep(session) {
    this.session = session;
    this.accessToken = session.accessToken;
    this.lifetime = (session.expiresIn || 900) * 1000;
    this.expiresAt = Date.now() + this.lifetime;
    try { this.storage.setItem(this.key, JSON.stringify({refreshToken: session.refreshToken})); } catch (e) { /* storage off */ }
    clearTimeout(this.timer);
    const early = Math.max(1000, this.lifetime - Math.min(60000, this.lifetime / 5));
    this.timer = setTimeout(() => { this.refresh().catch(() => {}); }, early);
    const view = Object.assign({}, session);
    delete view.accessToken; delete view.refreshToken;
    this.onSession(view);
  }

  _forget() {
    clearTimeout(this.timer);
    this.session = null;
    this.accessToken = null;
    try { this.storage.removeItem(this.key); } catch (e) { /* storage off */ }
  }

  async _post(path, body) {
    let response;
    try {
      response = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                                    body: JSON.stringify(body), cache: "no-store"});
    } catch (e) { throw new OfflineError(e); }
    const data = await response.json().catch(() => null);
    if (!response.ok) { throw new ApiError(response.status, data); }
    return data;
  }

  async signIn(email, password) {
    this._keep(await this._post("/auth/login", {email: email, password: password}));
    return this.session;
  }

  // Adopt a session answered elsewhere (an emailed link verified by /login, an accepted invite).
  adopt(session) { this._keep(session); return this.session; }

  // Resume from the kept refresh token; false when there is none or it no longer works.
  async resume() {
    if (!this.storedRefreshToken()) { return false; }
    try { await this.refresh(); return true; } catch (e) {
      if (e.offline) { throw e; }
      return false;
    }
  }

  refresh() {
    if (!this.refreshing) {
      const rotate = async () => {
        // Read the token inside the lock: another tab sharing the storage may have just rotated it.
        const token = this.storedRefreshToken();
        if (!token) { throw new ApiError(401, {title: "Not signed in"}); }
        try {
          this._keep(await this._post("/auth/refresh", {refreshToken: token}));
        } catch (e) {
          if (!e.offline) { this._forget(); this.onSignedOut(); }
          throw e;
        }
      };
      // Tabs of one origin sharing the stored token rotate one at a time (Web Locks), so none of
      // them ever sends a token another has already rotated out.
      const locked = navigator.locks ? navigator.locks.request("refresh:" + this.key, rotate) : rotate();
      this.refreshing = locked.finally(() => { this.refreshing = null; });
    }
    return this.refreshing;
  }

  async switchCompany(companyId) {
    const session = await this.request("POST", "/auth/switch-company",
                                       {companyId: companyId, refreshToken: this.storedRefreshToken()});
    this._keep(session);
    return this.session;
  }

  async signOut() {
    try { await this.request("POST", "/auth/logout"); } catch (e) { /* gone already or offline */ }
    this._forget();
    this.onSignedOut();
  }

  async authorization() {
    if (!this.accessToken || Date.now() > this.expiresAt - Math.min(30000, this.lifetime / 10)) { await this.refresh(); }
    return "Bearer " + this.accessToken;
  }

  // A JSON request with the bearer token; one refresh and retry on 401. Answers the parsed body
  // (null for 204); throws ApiError with the Problem, or OfflineError when the network is down.
  async request(method, path, body, options) {
    options = options || {};
    for (let attempt = 0; ; attempt++) {
      const headers = Object.assign({"Authorization": await this.authorization()}, options.headers || {});
      if (body !== undefined) { headers["Content-Type"] = "application/json"; }
      let response;
      try {
        response = await fetch(path, {method: method, headers: headers, cache: "no-store",
                                      body: body === undefined ? undefined : JSON.stringify(body),
                                      signal: options.signal});
      } catch (e) {
        if (e.name === "AbortError") { throw e; }
        throw new OfflineError(e);
      }
      if (response.status === 401 && attempt === 0) { await this.refresh(); continue; }
      if (response.status === 204) { return null; }
      const data = await response.json().catch(() => null);
      if (!response.ok) { throw new ApiError(response.status, data); }
      return data;
    }
  }

  get(path, options) { return this.request("GET", path, undefined, options); }
  post(path, body, options) { return this.request("POST", path, body === undefined ? {} : body, options); }
  patch(path, body) { return this.request("PATCH", path, body); }
  del(path) { return this.request("DELETE", path); }
}

// A key that makes a retried move safe (8..128 characters, see the courier app's status route).
export function idempotencyKey() {
  if (crypto.randomUUID) { return crypto.randomUUID(); }
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
