// The words of the pages behind emailed links (/login?token=…, /invite/…), Armenian first.
// {company}, {name}, {role} and {by} are filled in by the page.
export const TEXTS = {
  hy: {
    sendPasswordLink: "Մոռացել եմ գաղտնաբառը․ ուղարկել հղում", newPasswordTitle: "Նոր գաղտնաբառ", newPasswordAsk: "Ընտրեք նոր գաղտնաբառ (առնվազն 8 նիշ)։", newPassword: "Նոր գաղտնաբառ", setPassword: "Պահպանել և մուտք գործել",
    loginTitle: "Մուտք", signingIn: "Մուտք ենք գործում…", oneMoment: "Մի պահ։",
    askEmail: "Գրեք ձեր էլ. փոստը, և մենք կուղարկենք մուտքի հղում։", email: "Էլ. փոստ",
    sendLink: "Ուղարկել նոր մուտքի հղում", linkSent: "Եթե այդ հասցեով հաշիվ կա, հղումն ուղարկված է։",
    tryLater: "Փորձեք մեկ րոպեից։", noCompany: "Ձեր հաշիվը ոչ մի ակտիվ ընկերության չի պատկանում։",
    badLink: "Այս հղումը անվավեր է, արդեն օգտագործված կամ ժամկետանց։", signedIn: "Դուք մուտք եք գործել",
    offline: "Կապ չկա։ Փորձեք կրկին, երբ կապը վերադառնա։",
    inviteTitle: "Հրավեր", loadingInvite: "Բեռնում ենք հրավերը…", choosePassword: "Ընտրեք գաղտնաբառ (ըստ ցանկության, առնվազն 8 նիշ)",
    accept: "Ընդունել", signIn: "Մուտք գործել", unusable: "Այս հղումը հնարավոր չէ օգտագործել",
    used: "Այն արդեն օգտագործվել է։", expired: "Դրա ժամկետն անցել է։ Խնդրեք նորը։", invalid: "Այն վավեր չէ։",
    signInTo: "Մուտք՝ {company}", hello: "Բարև, {name}։", invites: "{company}-ը ձեզ հրավիրում է",
    joinAs: "{name}, միացեք որպես {role}։", invitedBy: "Հրավիրող՝ {by}։",
    signInFirst: "Այս էլ. փոստով հաշիվ արդեն կա․ նախ մուտք գործեք։", signInToAccept: "Մուտք գործել և ընդունել",
    alreadyMember: "Դուք արդեն անդամ եք։", welcome: "Բարի գալուստ {company}", signedInAs: "Դուք մուտք եք գործել որպես {name}։",
    role_owner: "սեփականատեր", role_dispatcher: "դիսպետչեր", role_courier: "առաքիչ",
  },
  ru: {
    sendPasswordLink: "Забыли пароль? Прислать ссылку", newPasswordTitle: "Новый пароль", newPasswordAsk: "Выберите новый пароль (не короче 8 символов).", newPassword: "Новый пароль", setPassword: "Сохранить и войти",
    loginTitle: "Вход", signingIn: "Выполняем вход…", oneMoment: "Минуту.",
    askEmail: "Введите почту, и мы пришлём ссылку для входа.", email: "Эл. почта",
    sendLink: "Прислать новую ссылку для входа", linkSent: "Если такой аккаунт есть, ссылка отправлена.",
    tryLater: "Попробуйте через минуту.", noCompany: "Ваш аккаунт не состоит ни в одной активной компании.",
    badLink: "Ссылка недействительна, уже использована или устарела.", signedIn: "Вы вошли",
    offline: "Нет связи. Попробуйте снова, когда связь появится.",
    inviteTitle: "Приглашение", loadingInvite: "Загружаем приглашение…", choosePassword: "Задайте пароль (по желанию, не короче 8 символов)",
    accept: "Принять", signIn: "Войти", unusable: "Эту ссылку нельзя использовать",
    used: "Она уже использована.", expired: "Срок её действия истёк. Попросите новую.", invalid: "Она недействительна.",
    signInTo: "Вход в {company}", hello: "Здравствуйте, {name}.", invites: "{company} приглашает вас",
    joinAs: "{name}, присоединяйтесь как {role}.", invitedBy: "Приглашает {by}.",
    signInFirst: "Аккаунт с этой почтой уже есть: сначала войдите.", signInToAccept: "Войти и принять",
    alreadyMember: "Вы уже участник.", welcome: "Добро пожаловать в {company}", signedInAs: "Вы вошли как {name}.",
    role_owner: "владелец", role_dispatcher: "диспетчер", role_courier: "курьер",
  },
  en: {
    sendPasswordLink: "Forgot the password? Email me a link", newPasswordTitle: "New password", newPasswordAsk: "Choose a new password (at least 8 characters).", newPassword: "New password", setPassword: "Save and sign in",
    loginTitle: "Sign in", signingIn: "Signing you in…", oneMoment: "One moment.",
    askEmail: "Enter your email and we will send you a sign-in link.", email: "Email",
    sendLink: "Email me a new sign-in link", linkSent: "If an account exists, a link is on its way.",
    tryLater: "Please try again in a minute.", noCompany: "Your account belongs to no active company.",
    badLink: "This link is invalid, used or expired.", signedIn: "You are signed in",
    offline: "No connection. Try again when it returns.",
    inviteTitle: "Invitation", loadingInvite: "Loading your invitation…", choosePassword: "Choose a password (optional, at least 8 characters)",
    accept: "Accept", signIn: "Sign in", unusable: "This link cannot be used",
    used: "It was already used.", expired: "It has expired. Ask for a new one.", invalid: "It is not valid.",
    signInTo: "Sign in to {company}", hello: "Hello {name}.", invites: "{company} invites you",
    joinAs: "{name}, join as {role}.", invitedBy: "Invited by {by}.",
    signInFirst: "An account with this email exists: sign in first.", signInToAccept: "Sign in to accept",
    alreadyMember: "You are already a member.", welcome: "Welcome to {company}", signedInAs: "You are signed in as {name}.",
    role_owner: "owner", role_dispatcher: "dispatcher", role_courier: "courier",
  },
};

// "{company} invites you" with the values given (text only: the page sets textContent).
export function fill(text, values) {
  return text.replace(/\{(\w+)\}/g, (whole, key) => (values[key] === undefined ? whole : String(values[key])));
}
