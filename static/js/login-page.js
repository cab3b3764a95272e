// /login?token=…: verifies an emailed sign-in link (the token leaves the address bar first), hands
// the session to the console or the courier app; or asks for the email to send a new link.
// /login?password=…: an emailed password link (forgot password): asks for the new password, sets it
// (POST /auth/password/reset) and signs in the same way.
import {handOver, linkPage, postJson} from "/static/js/link-page.js";

const $ = (id) => document.getElementById(id);
const token = new URLSearchParams(location.search).get("token");
const passwordToken = new URLSearchParams(location.search).get("password");
let state = token ? {stage: "verifying"} : passwordToken ? {stage: "password"} : {stage: "ask", message: "askEmail"};
let status = null;  // [className, text key]

const page = linkPage((p) => {
  document.title = p.T.loginTitle;
  $("title").textContent = state.stage === "verifying" ? p.T.signingIn : state.stage === "done" ? p.T.signedIn :
    state.stage === "password" ? p.T.newPasswordTitle : p.T.loginTitle;
  $("message").textContent = state.stage === "verifying" ? p.T.oneMoment :
    state.stage === "done" ? state.who : state.stage === "password" ? p.T.newPasswordAsk : p.T[state.message];
  $("again").hidden = state.stage !== "ask";
  $("new-password-form").hidden = state.stage !== "password";
  $("status").className = status ? status[0] : "";
  $("status").textContent = status ? p.T[status[1]] : "";
});
document.body.dataset.stage = state.stage;

function set(next) { state = next; document.body.dataset.stage = next.stage; page.redraw(); }

async function sendLink(path) {
  try {
    const {response} = await postJson(path, {email: $("email").value.trim()});
    status = response.ok ? ["ok", "linkSent"] : ["error", "tryLater"];
  } catch (error) { status = ["error", "offline"]; }
  page.redraw();
}

$("again").addEventListener("submit", (event) => { event.preventDefault(); sendLink("/auth/magic-link"); });
// Forgot password: a link that sets a new one (/login?password=…).
$("send-password-link").addEventListener("click", () => {
  if ($("email").reportValidity()) { sendLink("/auth/password/forgot"); }
});

function clearAddressBar() {
  history.replaceState(null, "", "/login" + (location.search.includes("lang=") ? "?lang=" + page.lang : ""));
}

async function verify() {
  clearAddressBar();
  let answer;
  try { answer = await postJson("/auth/magic-link/verify", {token: token}); } catch (error) {
    set({stage: "ask", message: "offline"});
    return;
  }
  signedIn(answer);
}

$("new-password-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  let answer;
  try {
    answer = await postJson("/auth/password/reset", {token: passwordToken, password: $("new-password").value});
  } catch (error) { status = ["error", "offline"]; page.redraw(); return; }
  $("new-password").value = "";
  signedIn(answer);
});

function signedIn(answer) {
  if (!answer.response.ok) {
    set({stage: "ask", message: answer.response.status === 403 ? "noCompany" : "badLink"});
    return;
  }
  const session = answer.body;
  document.documentElement.style.setProperty("--brand", session.company.brandColor);
  page.use(session.user.language);
  set({stage: "done", who: session.user.displayName + " · " + session.company.name + " (" + page.T["role_" + session.role] + ")"});
  handOver(session);
}

page.redraw();
if (token) { verify(); }
if (passwordToken) { clearAddressBar(); }
