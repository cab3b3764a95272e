"""Built-in late-delivery texts, used when the company has no template of its own.
Placeholders: {company}, {minutes}, {link}."""

LATE_TEXTS = {
    "hy": "{company}: Ձեր պատվերը կուշանա մոտ {minutes} րոպե։ Հետևեք առաքմանը՝ {link}",
    "ru": "{company}: ваш заказ задерживается примерно на {minutes} мин. Следите за доставкой: {link}",
    "en": "{company}: your delivery is running about {minutes} min late. Track it here: {link}",
}


def render(template: str, *, company: str, minutes: int, link: str) -> str:
    # Plain replacement (not str.format): a company's template may contain other braces.
    return template.replace("{company}", company).replace("{minutes}", str(minutes)).replace("{link}", link)
