"""The e-mails the dispatch service sends, in Armenian, Russian and English (the recipient's
language: their account's, else the sender's, else Armenian)."""

from __future__ import annotations

LANGUAGES = ("hy", "ru", "en")

TEXTS: dict[str, dict[str, tuple[str, str]]] = {
    "magic_link": {
        "hy": (
            "Մուտքի հղում",
            "Մուտք գործեք 15 րոպեի ընթացքում այս հղումով՝\n\n{link}\n\n"
            "Հղումը աշխատում է մեկ անգամ։ Եթե դուք այն չեք խնդրել, անտեսեք այս նամակը։\n",
        ),
        "ru": (
            "Ссылка для входа",
            "Войдите в течение 15 минут по этой ссылке:\n\n{link}\n\n"
            "Ссылка работает один раз. Если вы её не запрашивали, просто проигнорируйте это письмо.\n",
        ),
        "en": (
            "Your sign-in link",
            "Sign in within 15 minutes with this link:\n\n{link}\n\n"
            "The link works once. If you did not ask for it, ignore this email.\n",
        ),
    },
    "welcome": {
        "hy": (
            "Բարի գալուստ {company}․ մուտք",
            "Բարև, {name}։\n\n{company}-ն պատրաստ է։ Մուտք գործեք 15 րոպեի ընթացքում այս հղումով՝\n\n"
            "{link}\n\nՀղումը աշխատում է մեկ անգամ։\n",
        ),
        "ru": (
            "Добро пожаловать в {company}: вход",
            "Здравствуйте, {name}!\n\n{company} готова к работе. "
            "Войдите в течение 15 минут по этой ссылке:\n\n{link}\n\nСсылка работает один раз.\n",
        ),
        "en": (
            "Welcome to {company}: sign in",
            "Hello {name},\n\n{company} is ready. Sign in within 15 minutes with this link:\n\n{link}\n\n"
            "The link works once.\n",
        ),
    },
    "invite": {
        "hy": (
            "{company}-ն ձեզ հրավիրում է",
            "Բարև, {name}։\n\n{inviter}-ը ձեզ հրավիրում է {company} որպես {role}։ "
            "Ընդունեք 7 օրվա ընթացքում՝\n\n{link}\n",
        ),
        "ru": (
            "{company} приглашает вас",
            "Здравствуйте, {name}!\n\n{inviter} приглашает вас в {company} на роль {role}. "
            "Примите приглашение в течение 7 дней:\n\n{link}\n",
        ),
        "en": (
            "{company} invites you",
            "Hello {name},\n\n{inviter} invites you to {company} as {role}. "
            "Accept within 7 days:\n\n{link}\n",
        ),
    },
    # A link that sets a password: asked for ("forgot password"), or offered after an invite
    # was accepted with a password that cannot count until the address is proven.
    "password_reset": {
        "hy": (
            "Գաղտնաբառի փոփոխում",
            "Նոր գաղտնաբառ ընտրեք մեկ ժամվա ընթացքում այս հղումով՝\n\n{link}\n\n"
            "Հղումը աշխատում է մեկ անգամ։ Եթե դուք այն չեք խնդրել, անտեսեք այս նամակը․ "
            "ձեր գաղտնաբառը չի փոխվի։\n",
        ),
        "ru": (
            "Смена пароля",
            "Выберите новый пароль в течение часа по этой ссылке:\n\n{link}\n\n"
            "Ссылка работает один раз. Если вы её не запрашивали, проигнорируйте это письмо: "
            "ваш пароль не изменится.\n",
        ),
        "en": (
            "Change your password",
            "Choose a new password within an hour with this link:\n\n{link}\n\n"
            "The link works once. If you did not ask for it, ignore this email: "
            "your password stays as it is.\n",
        ),
    },
    "password_set": {
        "hy": (
            "Ընտրեք ձեր գաղտնաբառը",
            "Ձեր հաշիվը պատրաստ է։ Գաղտնաբառով մուտք գործելու համար ընտրեք այն "
            "մեկ ժամվա ընթացքում այս հղումով՝\n\n{link}\n\n"
            "Եթե դուք որևէ հրավեր չեք ընդունել, անտեսեք այս նամակը։\n",
        ),
        "ru": (
            "Выберите пароль",
            "Ваша учётная запись готова. Чтобы входить по паролю, выберите его в течение часа "
            "по этой ссылке:\n\n{link}\n\nЕсли вы не принимали приглашение, проигнорируйте это письмо.\n",
        ),
        "en": (
            "Choose your password",
            "Your account is ready. To sign in with a password, choose it within an hour with "
            "this link:\n\n{link}\n\nIf you did not accept an invitation, ignore this email.\n",
        ),
    },
}

ROLES = {
    "hy": {"owner": "սեփականատեր", "dispatcher": "դիսպետչեր", "courier": "առաքիչ"},
    "ru": {"owner": "владелец", "dispatcher": "диспетчер", "courier": "курьер"},
    "en": {"owner": "owner", "dispatcher": "dispatcher", "courier": "courier"},
}


def mail(kind: str, language: str | None, **values: str) -> tuple[str, str]:
    """(subject, body) of ``kind`` in ``language`` (Armenian when unknown)."""
    lang = language if language in LANGUAGES else "hy"
    if "role" in values:
        values["role"] = ROLES[lang].get(values["role"], values["role"])
    subject, body = TEXTS[kind][lang]
    return subject.format(**values), body.format(**values)
