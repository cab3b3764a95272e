// /invite/<token>: an invitation (a new account accepts here, with an optional password) or a
// member's login link. When the email already has an account the API answers sign_in_required:
// the page links to the console with the token in the fragment (never sent to a server or a
// referrer); the console signs the person in and then accepts.
import {handOver, linkPage, postJson} from "/static/js/link-page.js";

const $ = (id) => document.getElementById(id);
const token = decodeURIComponent(location.pathname.split("/").pop());
let invite = null;     // GET /auth/invite/{token}
let state = "loading"; // loading | unusable | open | done
let problem = null;    // the reason a link cannot be used, or why accepting failed
let session = null;

const page = linkPage((p) => {
  const T = p.T;
  document.title = T.inviteTitle;
  const company = invite ? invite.company.name : "";
  if (state === "loading") {
    $("title").textContent = T.loadingInvite; $("message").textContent = "";
  } else if (state === "unusable") {
    $("title").textContent = T.unusable; $("message").textContent = T[problem] || T.invalid;
  } else if (state === "done") {
    $("title").textContent = p.text("welcome", {company: session.company.name});
    $("message").textContent = p.text("signedInAs", {name: session.user.displayName});
  } else if (invite.kind === "sign_in") {
    $("title").textContent = p.text("signInTo", {company: company});
    $("message").textContent = p.text("hello", {name: invite.name});
  } else {
    $("title").textContent = p.text("invites", {company: company});
    $("message").textContent = p.text("joinAs", {name: invite.name, role: T["role_" + invite.role] || invite.role}) +
      (invite.invitedBy && invite.invitedBy.name ? " " + p.text("invitedBy", {by: invite.invitedBy.name}) : "");
  }
  $("accept").hidden = state !== "open";
  $("new-account").hidden = !invite || invite.kind === "sign_in";
  $("button").textContent = invite && invite.kind === "sign_in" ? T.signIn : T.accept;
  $("status").className = state === "open" && problem ? "error" : "";
  $("status").textContent = state === "open" && problem ? T[problem] || T.unusable : "";
  $("sign-in-to-accept").hidden = !(state === "open" && problem === "signInFirst");
});

function show(next) { state = next; document.body.dataset.stage = next; page.redraw(); }

async function load() {
  let response, body;
  try {
    response = await fetch("/auth/invite/" + encodeURIComponent(token), {cache: "no-store"});
    body = await response.json().catch(() => ({}));
  } catch (error) { problem = "offline"; show("unusable"); return; }
  if (!response.ok) { problem = body.code === "used" ? "used" : body.code === "expired" ? "expired" : "invalid"; show("unusable"); return; }
  invite = body;
  document.documentElement.style.setProperty("--brand", invite.company.brandColor);
  if (invite.company.logoUrl) { $("logo").src = invite.company.logoUrl; $("logo").hidden = false; }
  show("open");
}

$("accept").addEventListener("submit", async (event) => {
  event.preventDefault();
  const payload = {token: token};
  const password = $("password").value;
  if (invite.kind === "invite" && password) { payload.password = password; }
  $("button").disabled = true;
  let answer;
  try { answer = await postJson("/auth/invite/accept", payload); } catch (error) {
    problem = "offline"; $("button").disabled = false; page.redraw(); return;
  }
  $("button").disabled = false;
  if (!answer.response.ok) {
    const code = answer.body.code;
    problem = code === "sign_in_required" ? "signInFirst" : code === "already_member" ? "alreadyMember" : "unusable";
    page.redraw();
    return;
  }
  session = answer.body;
  page.use(session.user.language);
  show("done");
  handOver(session);
});

// The console picks the invite up from the fragment once the person has signed in.
$("sign-in-to-accept").href = "/console/#invite=" + encodeURIComponent(token);
page.redraw();
load();
