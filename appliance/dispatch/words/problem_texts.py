"""Problem ``detail`` and validation messages in hy and ru (the English text is the key).

Service code raises Problems in English, the API's own language; the renderer puts them in the
reader's language here. ``EXACT`` holds whole sentences; ``PATTERNS`` the sentences that carry a
value (the value kept, an order status named in the language). A sentence found in neither stays
English (the import's Problems and findings, which name the file's own columns, are worded by the
import itself). ``title`` and ``type`` never change: the specification fixes them.
"""

from __future__ import annotations

import re

from appliance.dispatch.words.names import status_name

T = dict[str, str]

EXACT: dict[str, T] = {
    # -- every answer -------------------------------------------------------------------------
    "No such resource.": {"hy": "Այդպիսի ռեսուրս չկա։", "ru": "Такого ресурса нет."},
    "No such delivery.": {"hy": "Այդպիսի առաքում (webhook) չկա։", "ru": "Такой отправки нет."},
    "The delivery was delivered; it is not sent again.": {
        "hy": "Այս ուղարկումն արդեն հասել է. այն կրկին չի ուղարկվում։",
        "ru": "Эта отправка уже доставлена; повторно она не отправляется.",
    },
    "The order needs a pin: its address could not be placed. Set its pin (PATCH /orders/{id}) first.": {
        "hy": "Պատվերին քարտեզի նշան է պետք. հասցեն չհաջողվեց տեղորոշել։ Նախ նշեք այն (PATCH /orders/{id})։",
        "ru": "Заказу нужна отметка на карте: адрес не удалось найти. "
        "Сначала поставьте её (PATCH /orders/{id}).",
    },
    "This method is not allowed on this resource.": {
        "hy": "Այս մեթոդն այստեղ թույլատրված չէ։",
        "ru": "Этот метод здесь не разрешён.",
    },
    "The request body is too large.": {
        "hy": "Հարցման մարմինը չափազանց մեծ է։",
        "ru": "Тело запроса слишком велико.",
    },
    "The request body is not valid JSON.": {
        "hy": "Հարցման մարմինը վավեր JSON չէ։",
        "ru": "Тело запроса — не корректный JSON.",
    },
    "A JSON request body is required.": {
        "hy": "Անհրաժեշտ է JSON մարմին։",
        "ru": "Нужно тело запроса в JSON.",
    },
    "Send the request body as application/json.": {
        "hy": "Ուղարկեք մարմինը application/json ձևաչափով։",
        "ru": "Отправьте тело запроса как application/json.",
    },
    "An unexpected error occurred.": {
        "hy": "Անսպասելի սխալ տեղի ունեցավ։",
        "ru": "Произошла непредвиденная ошибка.",
    },
    "Too many requests.": {"hy": "Չափազանց շատ հարցումներ։", "ru": "Слишком много запросов."},
    "Too many requests; try again later.": {
        "hy": "Չափազանց շատ հարցումներ․ փորձեք ավելի ուշ։",
        "ru": "Слишком много запросов; попробуйте позже.",
    },
    # -- sign-in and sessions -----------------------------------------------------------------
    "A bearer token is required.": {"hy": "Անհրաժեշտ է մուտք գործել։", "ru": "Нужно войти в систему."},
    "The access token is invalid or expired.": {
        "hy": "Մուտքի նշանը անվավեր է կամ ժամկետանց։",
        "ru": "Токен доступа недействителен или истёк.",
    },
    "The integration key is unknown or revoked.": {
        "hy": "Ինտեգրման բանալին անհայտ է կամ չեղարկված։",
        "ru": "Ключ интеграции неизвестен или отозван.",
    },
    "The session has ended.": {"hy": "Աշխատաշրջանն ավարտվել է։", "ru": "Сеанс завершён."},
    "An integration key can only create, import and read orders and their proof, read its "
    "shop's statements and manage webhooks.": {
        "hy": "Ինտեգրման բանալին կարող է միայն ստեղծել, ներմուծել և կարդալ պատվերներ և դրանց "
        "ապացույցները, կարդալ իր խանութի քաղվածքները և կառավարել webhook-ները։",
        "ru": "Ключ интеграции может только создавать, импортировать и читать заказы и их "
        "подтверждения, читать выписки своего магазина и управлять вебхуками.",
    },
    "No such invite.": {"hy": "Այդպիսի հրավեր չկա։", "ru": "Такого приглашения нет."},
    "This session was opened with a password your company set: sign in with your own account "
    "first, then accept.": {
        "hy": "Այս աշխատաշրջանը բացվել է ձեր ընկերության սահմանած գաղտնաբառով. նախ մուտք գործեք "
        "ձեր սեփական հաշվով, ապա ընդունեք։",
        "ru": "Этот сеанс открыт паролем, заданным вашей компанией: сначала войдите в свою "
        "учётную запись, затем примите приглашение.",
    },
    "An account with this email exists: sign in first, then accept.": {
        "hy": "Այս էլ. հասցեով հաշիվ կա․ նախ մուտք գործեք, ապա ընդունեք։",
        "ru": "Аккаунт с этим адресом уже есть: сначала войдите, затем примите.",
    },
    "The current password is not correct.": {
        "hy": "Ընթացիկ գաղտնաբառը սխալ է։",
        "ru": "Текущий пароль неверен.",
    },
    "The email or password is not correct.": {
        "hy": "Էլ. հասցեն կամ գաղտնաբառը սխալ է։",
        "ru": "Неверный адрес почты или пароль.",
    },
    "The invite is invalid, used or expired.": {
        "hy": "Հրավերն անվավեր է, օգտագործված կամ ժամկետանց։",
        "ru": "Приглашение недействительно, использовано или истекло.",
    },
    "The membership of this session is no longer active.": {
        "hy": "Այս աշխատաշրջանի անդամությունն այլևս ակտիվ չէ։",
        "ru": "Членство этого сеанса больше не активно.",
    },
    "The password link is invalid, used or expired.": {
        "hy": "Գաղտնաբառի հղումն անվավեր է, օգտագործված կամ ժամկետանց։",
        "ru": "Ссылка для пароля недействительна, использована или истекла.",
    },
    "The refresh token has expired or was revoked.": {
        "hy": "Թարմացման նշանը ժամկետանց է կամ չեղարկված։",
        "ru": "Токен обновления истёк или отозван.",
    },
    "The refresh token is not valid.": {
        "hy": "Թարմացման նշանն անվավեր է։",
        "ru": "Токен обновления недействителен.",
    },
    "The refresh token was already used; the session has been ended.": {
        "hy": "Թարմացման նշանն արդեն օգտագործվել է․ աշխատաշրջանն ավարտվեց։",
        "ru": "Токен обновления уже использован; сеанс завершён.",
    },
    "The sign-in link is invalid, used or expired.": {
        "hy": "Մուտքի հղումն անվավեր է, օգտագործված կամ ժամկետանց։",
        "ru": "Ссылка для входа недействительна, использована или истекла.",
    },
    "The sign-in link is no longer valid.": {
        "hy": "Մուտքի հղումն այլևս վավեր չէ։",
        "ru": "Ссылка для входа больше не действует.",
    },
    "This account belongs to no active company.": {
        "hy": "Այս հաշիվը ոչ մի ակտիվ ընկերության չի պատկանում։",
        "ru": "Этот аккаунт не состоит ни в одной активной компании.",
    },
    "You are already a member of this company.": {
        "hy": "Դուք արդեն այս ընկերության անդամ եք։",
        "ru": "Вы уже состоите в этой компании.",
    },
    "You are not an active member of that company.": {
        "hy": "Դուք այդ ընկերության ակտիվ անդամ չեք։",
        "ru": "Вы не активный участник этой компании.",
    },
    "This link was already used.": {
        "hy": "Այս հղումն արդեն օգտագործվել է։",
        "ru": "Эта ссылка уже использована.",
    },
    "This link has expired.": {"hy": "Այս հղման ժամկետն անցել է։", "ru": "Срок действия ссылки истёк."},
    "Only an owner can do this.": {
        "hy": "Սա կարող է անել միայն սեփականատերը։",
        "ru": "Это может сделать только владелец.",
    },
    "No pay rule is set.": {"hy": "Վարձատրության կանոն սահմանված չէ։", "ru": "Правило оплаты не задано."},
    # -- cash -----------------------------------------------------------------------------------
    "A handover already awaits confirmation.": {
        "hy": "Հանձնումն արդեն սպասում է հաստատման։",
        "ru": "Сдача кассы уже ждёт подтверждения.",
    },
    "A note is required when the handover is short.": {
        "hy": "Պակասորդի դեպքում նշում է պետք։",
        "ru": "При недостаче нужна заметка.",
    },
    "No such settlement.": {"hy": "Այդպիսի հանձնում չկա։", "ru": "Такой сдачи кассы нет."},
    "Nothing to settle.": {"hy": "Հանձնելու ոչինչ չկա։", "ru": "Сдавать нечего."},
    "This settlement is not awaiting confirmation.": {
        "hy": "Այս հանձնումը հաստատման չի սպասում։",
        "ru": "Эта сдача кассы не ждёт подтверждения.",
    },
    "receivedAmd is more than the submitted amount.": {
        "hy": "Ստացված գումարը (receivedAmd) ավելին է, քան հանձնվածը։",
        "ru": "Полученная сумма (receivedAmd) больше сданной.",
    },
    # -- company, team --------------------------------------------------------------------------
    "The company name must be 2..120 characters.": {
        "hy": "Ընկերության անունը պետք է լինի 2-ից 120 նիշ։",
        "ru": "Название компании — от 2 до 120 символов.",
    },
    "The depot lies outside the service area (lat 38.8..41.4, lon 43.4..46.7).": {
        "hy": "Պահեստը սպասարկման տարածքից դուրս է (lat 38.8..41.4, lon 43.4..46.7)։",
        "ru": "Склад вне зоны обслуживания (lat 38.8..41.4, lon 43.4..46.7).",
    },
    "The owner password must be at least 8 characters.": {
        "hy": "Սեփականատիրոջ գաղտնաբառը պետք է լինի առնվազն 8 նիշ։",
        "ru": "Пароль владельца — не менее 8 символов.",
    },
    "Logos must be image/jpeg, image/png or image/webp.": {
        "hy": "Լոգոն պետք է լինի image/jpeg, image/png կամ image/webp։",
        "ru": "Логотип должен быть image/jpeg, image/png или image/webp.",
    },
    "No such depot.": {"hy": "Այդպիսի պահեստ չկա։", "ru": "Такого склада нет."},
    "Object storage is unavailable.": {
        "hy": "Ֆայլերի պահոցը հասանելի չէ։",
        "ru": "Хранилище файлов недоступно.",
    },
    "The logo key was not uploaded for this company.": {
        "hy": "Այս լոգոն այս ընկերության համար չի վերբեռնվել։",
        "ru": "Этот логотип не загружен для этой компании.",
    },
    "A dispatcher can only enable or disable couriers.": {
        "hy": "Դիսպետչերը կարող է միայն միացնել կամ անջատել առաքիչներին։",
        "ru": "Диспетчер может только включать и отключать курьеров.",
    },
    "No such member.": {"hy": "Այդպիսի անդամ չկա։", "ru": "Такого участника нет."},
    "Only an owner can invite dispatchers and owners.": {
        "hy": "Միայն սեփականատերը կարող է հրավիրել դիսպետչերների և սեփականատերերի։",
        "ru": "Только владелец может приглашать диспетчеров и владельцев.",
    },
    "Only an owner can issue a sign-in link for a dispatcher.": {
        "hy": "Միայն սեփականատերը կարող է դիսպետչերի համար մուտքի հղում տալ։",
        "ru": "Только владелец может выдать ссылку для входа диспетчеру.",
    },
    "Sign-in links are never issued for owners.": {
        "hy": "Սեփականատերերի համար մուտքի հղում չի տրվում։",
        "ru": "Владельцам ссылки для входа не выдаются.",
    },
    "The company must keep one active owner.": {
        "hy": "Ընկերությունը պետք է ունենա մեկ ակտիվ սեփականատեր։",
        "ru": "У компании должен остаться активный владелец.",
    },
    "This member also belongs to another company.": {
        "hy": "Այս անդամը նաև այլ ընկերության անդամ է։",
        "ru": "Этот участник состоит и в другой компании.",
    },
    "This member can sign in already.": {
        "hy": "Այս անդամն արդեն կարող է մուտք գործել։",
        "ru": "Этот участник уже может войти.",
    },
    "This member is disabled.": {"hy": "Այս անդամն անջատված է։", "ru": "Этот участник отключён."},
    # -- couriers and the courier app -----------------------------------------------------------
    "No courier profile in this company.": {
        "hy": "Այս ընկերությունում առաքիչի պրոֆիլ չկա։",
        "ru": "В этой компании нет профиля курьера.",
    },
    "No changes.": {"hy": "Փոփոխություն չկա։", "ru": "Изменений нет."},
    "No such order.": {"hy": "Այդպիսի պատվեր չկա։", "ru": "Такого заказа нет."},
    "Proof photos must be image/jpeg, image/png or image/webp.": {
        "hy": "Լուսանկարը պետք է լինի image/jpeg, image/png կամ image/webp։",
        "ru": "Фото должно быть image/jpeg, image/png или image/webp.",
    },
    "The delivery code is wrong.": {"hy": "Առաքման կոդը սխալ է։", "ru": "Неверный код доставки."},
    "This idempotency key is being used by another request.": {
        "hy": "Այս բանալին օգտագործվում է այլ հարցման կողմից։",
        "ru": "Этот ключ идемпотентности занят другим запросом.",
    },
    "This idempotency key was used for another status change.": {
        "hy": "Այս բանալին օգտագործվել է այլ կարգավիճակի փոփոխության համար։",
        "ru": "Этот ключ идемпотентности использован для другой смены статуса.",
    },
    "This order needs the delivery code.": {
        "hy": "Այս պատվերը պահանջում է առաքման կոդը։",
        "ru": "Для этого заказа нужен код доставки.",
    },
    "Too many wrong delivery codes; the dispatcher must help.": {
        "hy": "Չափազանց շատ սխալ կոդեր․ դիմեք դիսպետչերին։",
        "ru": "Слишком много неверных кодов; нужна помощь диспетчера.",
    },
    "failureReason is required to fail an order.": {
        "hy": "Չառաքման պատճառը (failureReason) պարտադիր է։",
        "ru": "Нужна причина недоставки (failureReason).",
    },
    "photoKey was not issued for this order, or nothing was uploaded to it.": {
        "hy": "Լուսանկարը (photoKey) այս պատվերի համար չի տրվել կամ չի վերբեռնվել։",
        "ru": "Фото (photoKey) не выдано для этого заказа или не загружено.",
    },
    # -- proof of delivery (issue 47) ---------------------------------------------------------
    "signatureKey was not issued for this order, or nothing was uploaded to it.": {
        "hy": "Ստորագրությունը (signatureKey) այս պատվերի համար չի տրվել կամ չի վերբեռնվել։",
        "ru": "Подпись (signatureKey) не выдана для этого заказа или не загружена.",
    },
    "The scanned code is not this order's.": {
        "hy": "Սկանավորված կոդն այս պատվերինը չէ։",
        "ru": "Отсканированный код не от этого заказа.",
    },
    "A signature must be image/png.": {
        "hy": "Ստորագրությունը պետք է լինի image/png։",
        "ru": "Подпись должна быть image/png.",
    },
    "Name the orders to pick up: orderIds or codes.": {
        "hy": "Նշեք վերցվող պատվերները՝ orderIds կամ codes։",
        "ru": "Укажите забираемые заказы: orderIds или codes.",
    },
    "The order has no proof yet: it is not delivered.": {
        "hy": "Պատվերը դեռ ապացույց չունի․ այն առաքված չէ։",
        "ru": "У заказа ещё нет подтверждения: он не доставлен.",
    },
    "preferredLanguage must be hy, ru or en.": {
        "hy": "Լեզուն (preferredLanguage) պետք է լինի hy, ru կամ en։",
        "ru": "Язык (preferredLanguage) должен быть hy, ru или en.",
    },
    "A shift is already open.": {"hy": "Հերթափոխն արդեն բաց է։", "ru": "Смена уже открыта."},
    "No shift is open.": {"hy": "Բաց հերթափոխ չկա։", "ru": "Открытой смены нет."},
    "No such courier.": {"hy": "Այդպիսի առաքիչ չկա։", "ru": "Такого курьера нет."},
    "Only a courier's password can be set here.": {
        "hy": "Այստեղ կարելի է սահմանել միայն առաքիչի գաղտնաբառը։",
        "ru": "Здесь можно задать только пароль курьера.",
    },
    "This address is already a member of your company.": {
        "hy": "Այս հասցեն արդեն ձեր ընկերության անդամ է։",
        "ru": "Этот адрес уже состоит в вашей компании.",
    },
    "This courier has no address to sign in with.": {
        "hy": "Այս առաքիչը մուտքի հասցե չունի։",
        "ru": "У этого курьера нет адреса для входа.",
    },
    "This courier has proven their address: only they can change their password.": {
        "hy": "Առաքիչը հաստատել է իր հասցեն․ միայն ինքը կարող է փոխել գաղտնաբառը։",
        "ru": "Курьер подтвердил свой адрес: сменить пароль может только он сам.",
    },
    "Last-Event-ID must be an event id.": {
        "hy": "Last-Event-ID-ն պետք է լինի իրադարձության համար։",
        "ru": "Last-Event-ID должен быть номером события.",
    },
    "Too many event streams are open.": {
        "hy": "Չափազանց շատ հոսքեր են բաց։",
        "ru": "Открыто слишком много потоков.",
    },
    "Too many event streams are open; retry shortly.": {
        "hy": "Չափազանց շատ հոսքեր են բաց․ փորձեք քիչ անց։",
        "ru": "Открыто слишком много потоков; повторите чуть позже.",
    },
    "No such integration key.": {"hy": "Այդպիսի ինտեգրման բանալի չկա։", "ru": "Такого ключа интеграции нет."},
    "No such webhook.": {"hy": "Այդպիսի webhook չկա։", "ru": "Такого вебхука нет."},
    # -- messages -------------------------------------------------------------------------------
    "No SMS provider or e-mail is set up for this recipient.": {
        "hy": "Այս ստացողի համար SMS մատակարար կամ էլ. փոստ կարգավորված չէ։",
        "ru": "Для этого получателя не настроены SMS-провайдер или почта.",
    },
    "SMS needs the provider's host, port, system id, password and source address.": {
        "hy": "SMS-ի համար պետք են մատակարարի հոսթը, պորտը, system id-ն, գաղտնաբառը և ուղարկողի հասցեն։",
        "ru": "Для SMS нужны хост, порт, system id, пароль и адрес отправителя провайдера.",
    },
    "The SMS provider's host is refused: it must resolve to public addresses only.": {
        "hy": "SMS մատակարարի հոսթը մերժված է․ այն պետք է լինի միայն հանրային հասցեներով։",
        "ru": "Хост SMS-провайдера отклонён: он должен указывать только на публичные адреса.",
    },
    "The order is not out for delivery.": {
        "hy": "Պատվերը առաքման ճանապարհին չէ։",
        "ru": "Заказ не в доставке.",
    },
    # -- objects --------------------------------------------------------------------------------
    "No such object.": {"hy": "Այդպիսի ֆայլ չկա։", "ru": "Такого файла нет."},
    "The link is invalid or expired.": {
        "hy": "Հղումն անվավեր է կամ ժամկետանց։",
        "ru": "Ссылка недействительна или истекла.",
    },
    "The upload link is invalid or expired.": {
        "hy": "Վերբեռնման հղումն անվավեր է կամ ժամկետանց։",
        "ru": "Ссылка для загрузки недействительна или истекла.",
    },
    # -- orders ---------------------------------------------------------------------------------
    "A bulk request with this Idempotency-Key is still running.": {
        "hy": "Այս Idempotency-Key-ով խմբային հարցումը դեռ ընթանում է։",
        "ru": "Пакетный запрос с этим Idempotency-Key ещё выполняется.",
    },
    "An order is named twice.": {"hy": "Պատվերը նշված է երկու անգամ։", "ru": "Заказ указан дважды."},
    "This Idempotency-Key was used for another bulk request.": {
        "hy": "Այս Idempotency-Key-ն օգտագործվել է այլ խմբային հարցման համար։",
        "ru": "Этот Idempotency-Key использован для другого пакетного запроса.",
    },
    "No such active courier.": {"hy": "Այդպիսի ակտիվ առաքիչ չկա։", "ru": "Такого активного курьера нет."},
    "The order is already with this courier.": {
        "hy": "Պատվերն արդեն այս առաքիչի մոտ է։",
        "ru": "Заказ уже у этого курьера.",
    },
    "date must be a calendar date YYYY-MM-DD.": {
        "hy": "Ամսաթիվը (date) պետք է լինի YYYY-MM-DD։",
        "ru": "Дата (date) должна быть в виде ГГГГ-ММ-ДД.",
    },
    "Give the delivery code or the recipient's name.": {
        "hy": "Նշեք առաքման կոդը կամ ստացողի անունը։",
        "ru": "Укажите код доставки или имя получателя.",
    },
    "Idempotency-Key must be 8 to 128 characters.": {
        "hy": "Idempotency-Key-ն պետք է լինի 8-ից 128 նիշ։",
        "ru": "Idempotency-Key — от 8 до 128 символов.",
    },
    "No proof photo.": {"hy": "Առաքման լուսանկար չկա։", "ru": "Фото доставки нет."},
    "A courier of the plan is unknown or inactive.": {
        "hy": "Պլանի առաքիչներից մեկն անհայտ է կամ ոչ ակտիվ։",
        "ru": "Курьер плана неизвестен или неактивен.",
    },
    "Only draft and ready orders can be edited.": {
        "hy": "Խմբագրել կարելի է միայն սևագիր և պատրաստ պատվերները։",
        "ru": "Изменять можно только черновики и готовые заказы.",
    },
    "Some orders of the plan do not exist.": {
        "hy": "Պլանի որոշ պատվերներ գոյություն չունեն։",
        "ru": "Некоторых заказов плана не существует.",
    },
    "The courier is not active.": {"hy": "Առաքիչն ակտիվ չէ։", "ru": "Курьер неактивен."},
    "The order is already assigned to this courier.": {
        "hy": "Պատվերն արդեն նշանակված է այս առաքիչին։",
        "ru": "Заказ уже назначен этому курьеру.",
    },
    "The plan is stale: some orders are no longer assignable.": {
        "hy": "Պլանը հնացել է․ որոշ պատվերներ այլևս հնարավոր չէ նշանակել։",
        "ru": "План устарел: некоторые заказы больше нельзя назначить.",
    },
    "This order does not require a delivery code.": {
        "hy": "Այս պատվերը առաքման կոդ չի պահանջում։",
        "ru": "Этому заказу не нужен код доставки.",
    },
    "deliveryWindowEnd must be after deliveryWindowStart.": {
        "hy": "Առաքման միջակայքի ավարտը պետք է լինի սկզբից հետո։",
        "ru": "Конец окна доставки должен быть позже начала.",
    },
    # -- plans ----------------------------------------------------------------------------------
    "A courier has two routes in the plan.": {
        "hy": "Առաքիչը պլանում երկու երթուղի ունի։",
        "ru": "У курьера в плане два маршрута.",
    },
    "A courier's shift ends before it starts.": {
        "hy": "Առաքիչի հերթափոխն ավարտվում է սկսվելուց առաջ։",
        "ru": "Смена курьера кончается раньше, чем начинается.",
    },
    "A locked stop cannot be kept.": {
        "hy": "Ամրագրված կանգառը հնարավոր չէ պահել։",
        "ru": "Закреплённую остановку нельзя сохранить.",
    },
    "A past day cannot be planned.": {
        "hy": "Անցած օրը հնարավոր չէ պլանավորել։",
        "ru": "Прошедший день нельзя планировать.",
    },
    "A plan has at most 20 routes.": {
        "hy": "Պլանը ունի առավելագույնը 20 երթուղի։",
        "ru": "В плане не больше 20 маршрутов.",
    },
    "A plan reaches at most a year ahead.": {
        "hy": "Պլանը կարող է լինել առավելագույնը մեկ տարի առաջ։",
        "ru": "План — не больше чем на год вперёд.",
    },
    "A route has at most 200 stops.": {
        "hy": "Երթուղին ունի առավելագույնը 200 կանգառ։",
        "ru": "В маршруте не больше 200 остановок.",
    },
    "Each route's sequences must be 1..n.": {
        "hy": "Յուրաքանչյուր երթուղու հերթականությունը պետք է լինի 1..n։",
        "ru": "Порядок в каждом маршруте должен быть 1..n.",
    },
    "Limits are given for a courier who is not planned.": {
        "hy": "Սահմանափակումներ են տրված չպլանավորված առաքիչի համար։",
        "ru": "Ограничения заданы для курьера, которого нет в плане.",
    },
    "Nothing to plan: no courier is on shift (choose couriers with courierIds, or onShift false).": {
        "hy": "Պլանավորելու ոչինչ չկա․ հերթափոխում առաքիչ չկա (ընտրեք courierIds կամ onShift false)։",
        "ru": "Нечего планировать: нет курьеров на смене (выберите courierIds или onShift false).",
    },
    "Nothing to plan: no ready orders or no active couriers.": {
        "hy": "Պլանավորելու ոչինչ չկա․ պատրաստ պատվերներ կամ ակտիվ առաքիչներ չկան։",
        "ru": "Нечего планировать: нет готовых заказов или активных курьеров.",
    },
    "Some couriers do not exist.": {
        "hy": "Որոշ առաքիչներ գոյություն չունեն։",
        "ru": "Некоторых курьеров не существует.",
    },
    "Some couriers of the plan do not exist.": {
        "hy": "Պլանի որոշ առաքիչներ գոյություն չունեն։",
        "ru": "Некоторых курьеров плана не существует.",
    },
    "Some orders do not exist.": {
        "hy": "Որոշ պատվերներ գոյություն չունեն։",
        "ru": "Некоторых заказов не существует.",
    },
    "The order is not in the plan.": {"hy": "Պատվերը պլանում չէ։", "ru": "Заказа нет в плане."},
    # -- reports ------------------------------------------------------------------------------
    "'to' must be after 'from' (the range is [from, to))": {
        "hy": "«to»-ն պետք է լինի «from»-ից հետո (միջակայքը՝ [from, to))",
        "ru": "«to» должно быть позже «from» (диапазон [from, to))",
    },
    # -- tracking -------------------------------------------------------------------------------
    "No such tracking link.": {"hy": "Այդպիսի հետևման հղում չկա։", "ru": "Такой ссылки отслеживания нет."},
    "The order is not delivered yet.": {"hy": "Պատվերը դեռ առաքված չէ։", "ru": "Заказ ещё не доставлен."},
    "The order is not on its way.": {"hy": "Պատվերը ճանապարհին չէ։", "ru": "Заказ не в пути."},
    "This delivery was already rated.": {
        "hy": "Այս առաքումն արդեն գնահատվել է։",
        "ru": "Эта доставка уже оценена.",
    },
    # -- delivery fees and shop statements (issue 47) -------------------------------------------
    "The zone's polygon is not a simple ring of 3 to 200 vertices.": {
        "hy": "Գոտու բազմանկյունը 3-ից 200 գագաթով պարզ օղակ չէ։",
        "ru": "Многоугольник зоны — не простой контур из 3–200 вершин.",
    },
    "A company has at most 100 fee zones.": {
        "hy": "Ընկերությունը կարող է ունենալ առավելագույնը 100 վճարի գոտի։",
        "ru": "У компании может быть не более 100 тарифных зон.",
    },
    "No such fee zone.": {"hy": "Այդպիսի վճարի գոտի չկա։", "ru": "Такой тарифной зоны нет."},
    "No such shop.": {"hy": "Այդպիսի խանութ չկա։", "ru": "Такого магазина нет."},
    "A cancelled order has no delivery fee to change.": {
        "hy": "Չեղարկված պատվերն առաքման վճար չունի, որը հնարավոր լինի փոխել։",
        "ru": "У отменённого заказа нет стоимости доставки, которую можно изменить.",
    },
    "The order is on a shop statement already paid: its delivery fee cannot change.": {
        "hy": "Պատվերը խանութի արդեն վճարված քաղվածքում է. դրա առաքման վճարը չի կարող փոխվել։",
        "ru": "Заказ входит в уже оплаченную выписку магазина: стоимость доставки изменить нельзя.",
    },
    "The period has not ended yet: a statement is paid once its last day is over.": {
        "hy": "Ժամանակահատվածը դեռ չի ավարտվել. քաղվածքը վճարվում է դրա վերջին օրն ավարտվելուց հետո։",
        "ru": "Период ещё не закончился: выписка оплачивается после его последнего дня.",
    },
    "This shop's statement for the period, or part of it, is already paid.": {
        "hy": "Այս խանութի քաղվածքն այդ ժամանակահատվածի կամ դրա մի մասի համար արդեն վճարված է։",
        "ru": "Выписка этого магазина за этот период или его часть уже оплачена.",
    },
    "The statement's cash does not match the cash ledger; it cannot be paid until they agree.": {
        "hy": "Քաղվածքի կանխիկը չի համընկնում դրամարկղի հաշվառման հետ. այն չի վճարվի, քանի դեռ չեն համընկել։",
        "ru": "Наличные в выписке не сходятся с кассовым учётом; оплатить её нельзя, пока они не сойдутся.",
    },
    "Only a shop's integration key can do this.": {
        "hy": "Սա կարող է անել միայն խանութի ինտեգրման բանալին։",
        "ru": "Это может сделать только ключ интеграции магазина.",
    },
    # -- fiscal receipts through e-HDM (issue 47) ------------------------------------------------
    "The company has no e-HDM settings.": {
        "hy": "Ընկերությունը e-ՀԴՄ կարգավորումներ չունի։",
        "ru": "У компании нет настроек e-HDM.",
    },
    "The e-HDM address is refused: it must resolve to public addresses only.": {
        "hy": "e-ՀԴՄ-ի հասցեն մերժված է. այն պետք է տանի միայն հանրային հասցեների։",
        "ru": "Адрес e-HDM отклонён: он должен вести только на публичные адреса.",
    },
    "The e-HDM address must be an https URL.": {
        "hy": "e-ՀԴՄ-ի հասցեն պետք է լինի https URL։",
        "ru": "Адрес e-HDM должен быть URL https.",
    },
    "The e-HDM certificate is not a PEM certificate.": {
        "hy": "e-ՀԴՄ-ի վկայականը PEM վկայական չէ։",
        "ru": "Сертификат e-HDM не является сертификатом PEM.",
    },
    "The e-HDM private key does not belong to the certificate.": {
        "hy": "e-ՀԴՄ-ի գաղտնի բանալին այդ վկայականինը չէ։",
        "ru": "Закрытый ключ e-HDM не принадлежит сертификату.",
    },
    "The e-HDM private key is not an unencrypted PEM private key.": {
        "hy": "e-ՀԴՄ-ի գաղտնի բանալին չգաղտնագրված PEM բանալի չէ։",
        "ru": "Закрытый ключ e-HDM не является незашифрованным ключом PEM.",
    },
    "The e-HDM private key is required.": {
        "hy": "e-ՀԴՄ-ի գաղտնի բանալին պարտադիր է։",
        "ru": "Закрытый ключ e-HDM обязателен.",
    },
    "The e-HDM server's CA is not a PEM certificate.": {
        "hy": "e-ՀԴՄ սերվերի CA-ն PEM վկայական չէ։",
        "ru": "CA сервера e-HDM не является сертификатом PEM.",
    },
    "The order has no such fiscal receipt.": {
        "hy": "Պատվերը նման հարկային կտրոն չունի։",
        "ru": "У заказа нет такого фискального чека.",
    },
    "Only a delivered order whose receipt is printed can be returned.": {
        "hy": "Վերադարձնել կարելի է միայն առաքված պատվերը, որի կտրոնը տպված է։",
        "ru": "Вернуть можно только доставленный заказ с напечатанным чеком.",
    },
    "The order's return receipt was asked for already.": {
        "hy": "Պատվերի վերադարձի կտրոնն արդեն պահանջված է։",
        "ru": "Чек возврата по заказу уже запрошен.",
    },
    "The receipt waits on no decision.": {
        "hy": "Կտրոնը որոշման չի սպասում։",
        "ru": "Чек не ждёт решения.",
    },
    "e-HDM could not be reached.": {
        "hy": "e-ՀԴՄ-ին չհաջողվեց միանալ։",
        "ru": "Не удалось связаться с e-HDM.",
    },
    "e-HDM refused the call.": {"hy": "e-ՀԴՄ-ն մերժեց հարցումը։", "ru": "e-HDM отклонил запрос."},
    "e-HDM has no such receipt.": {"hy": "e-ՀԴՄ-ում նման կտրոն չկա։", "ru": "В e-HDM нет такого чека."},
    "That receipt's total is not the order's cash.": {
        "hy": "Այդ կտրոնի գումարը պատվերի կանխիկը չէ։",
        "ru": "Сумма этого чека не равна наличным по заказу.",
    },
    "receiptId is required when the receipt was printed.": {
        "hy": "receiptId-ն պարտադիր է, եթե կտրոնը տպվել է։",
        "ru": "receiptId обязателен, если чек напечатан.",
    },
}

# Sentences with a value: (pattern, {lang: template}); ``{status}`` is put in the language,
# every other group kept as it came.
PATTERNS: list[tuple[re.Pattern[str], T]] = [
    (
        re.compile(r"^Invalid (?P<where>body|query|path): (?P<names>[\w.\[\]-]+(?:, [\w.\[\]-]+)*)\.$"),
        {"hy": "Սխալ տվյալներ ({where})՝ {names}։", "ru": "Неверные данные ({where}): {names}."},
    ),
    (
        re.compile(r"^(?P<field>\w+) cannot be null\.$"),
        {"hy": "{field}-ը չի կարող դատարկ լինել։", "ru": "{field} не может быть пустым."},
    ),
    (
        re.compile(r"^The order is (?P<status>\w+): nothing waits on the courier's move\.$"),
        {
            "hy": "Պատվերը {status} է․ առաքիչի քայլին ոչինչ չի սպասում։",
            "ru": "Заказ {status}: ход курьера не ожидается.",
        },
    ),
    (
        re.compile(r"^The order is (?P<status>\w+): its delivery code is no longer used\.$"),
        {
            "hy": "Պատվերը {status} է․ առաքման կոդն այլևս չի օգտագործվում։",
            "ru": "Заказ {status}: код доставки больше не нужен.",
        },
    ),
    (
        re.compile(r"^An order cannot move from (?P<status>\w+) to (?P<to>\w+)\.$"),
        {
            "hy": "Պատվերը չի կարող «{status}»-ից անցնել «{to_status}»-ի։",
            "ru": "Заказ не может перейти из «{status}» в «{to_status}».",
        },
    ),
    (
        re.compile(r"^An order in status (?P<status>\w+) cannot be assigned\.$"),
        {
            "hy": "«{status}» կարգավիճակով պատվերը հնարավոր չէ նշանակել։",
            "ru": "Заказ в статусе «{status}» нельзя назначить.",
        },
    ),
    (
        re.compile(r"^Only draft and ready orders move to another day; this one is (?P<status>\w+)\.$"),
        {
            "hy": "Այլ օր տեղափոխվում են միայն սևագիր և պատրաստ պատվերները․ այս մեկը {status} է։",
            "ru": "На другой день переносятся только черновики и готовые заказы; этот — {status}.",
        },
    ),
    (
        re.compile(
            r"^Only a picked-up or arrived order can be (?P<what>delivered|handed over); "
            r"this one is (?P<status>\w+)\.$"
        ),
        {
            "hy": "Միայն վերցված կամ տեղում գտնվող պատվերը կարող է {what_hy}․ այս մեկը {status} է։",
            "ru": "{what_ru} можно только забранный или прибывший заказ; этот — {status}.",
        },
    ),
    (
        re.compile(r"^The delivery needs more proof: (?P<kinds>[a-z]+(?:, [a-z]+)*)\.$"),
        {
            "hy": "Առաքմանը պակասում է ապացույց՝ {kinds_hy}։",
            "ru": "Для доставки не хватает подтверждения: {kinds_ru}.",
        },
    ),
    (
        re.compile(r"^Unknown proof kinds: (?P<kinds>.*)\.$"),
        {"hy": "Անհայտ ապացույցի տեսակներ՝ {kinds}։", "ru": "Неизвестные виды подтверждения: {kinds}."},
    ),
    (
        re.compile(r"^A proof photo may be at most (?P<n>\d+) bytes\.$"),
        {"hy": "Լուսանկարը կարող է լինել առավելագույնը {n} բայթ։", "ru": "Фото — не больше {n} байт."},
    ),
    (
        re.compile(r"^At most (?P<n>\d+) bytes\.$"),
        {"hy": "Առավելագույնը {n} բայթ։", "ru": "Не больше {n} байт."},
    ),
    (
        re.compile(r"^No such (?P<what>order|courier|orders|couriers)\.$"),
        {"hy": "Այդպիսի {what_hy} չկա։", "ru": "Такого {what_ru} нет."},
    ),
    (
        re.compile(r"^(?:Order (?P<id>\d+) appears twice in the plan)\.$"),
        {"hy": "{id} պատվերը պլանում երկու անգամ է։", "ru": "Заказ {id} в плане дважды."},
    ),
    (
        re.compile(r"^The route solver failed: (?P<why>.*)$"),
        {"hy": "Երթուղիների լուծիչը ձախողվեց․ {why}", "ru": "Сбой решателя маршрутов: {why}"},
    ),
    (
        re.compile(r"^The company already has an order with externalRef (?P<ref>.*)\.$"),
        {
            "hy": "Ընկերությունն արդեն ունի պատվեր externalRef {ref}-ով։",
            "ru": "У компании уже есть заказ с externalRef {ref}.",
        },
    ),
    (
        re.compile(r"^This company has invited (?P<n>\d+) addresses within the last hour;.*$"),
        {
            "hy": "Ընկերությունը վերջին ժամում հրավիրել է {n} հասցե․ "
            "հրավիրեք ավելի ուշ կամ հղումով՝ առանց հասցեի։",
            "ru": "Компания пригласила {n} адресов за последний час; "
            "пригласите позже или ссылкой без адреса.",
        },
    ),
    (
        re.compile(r"^a report covers at most (?P<n>\d+) days$"),
        {
            "hy": "հաշվետվությունն ընդգրկում է առավելագույնը {n} օր",
            "ru": "отчёт охватывает не более {n} дней",
        },
    ),
]

# The kinds of proof (appliance/dispatch/orders/proof.py), as a Problem names what is missing.
PROOF_KINDS = {
    "photo": {"hy": "լուսանկար", "ru": "фото"},
    "signature": {"hy": "ստացողի ստորագրություն", "ru": "подпись получателя"},
    "code": {"hy": "առաքման կոդ", "ru": "код доставки"},
    "scan": {"hy": "ծանրոցի կոդի սկանավորում", "ru": "скан кода посылки"},
    "name": {"hy": "ստացողի անուն", "ru": "имя получателя"},
    "age": {"hy": "տարիքի ստուգում", "ru": "проверка возраста"},
}

_WHAT = {
    "delivered": {"hy": "առաքվել", "ru": "Доставить"},
    "handed over": {"hy": "հանձնվել", "ru": "Передать"},
    "order": {"hy": "պատվեր", "ru": "заказа"},
    "courier": {"hy": "առաքիչ", "ru": "курьера"},
    "orders": {"hy": "պատվեր", "ru": "заказа"},
    "couriers": {"hy": "առաքիչ", "ru": "курьера"},
}

# Pydantic's findings (errors[].message), by the start of its English sentence.
MESSAGE_PATTERNS: list[tuple[re.Pattern[str], T]] = [
    (re.compile(r"^Field required$"), {"hy": "պարտադիր դաշտ", "ru": "обязательное поле"}),
    (re.compile(r"^Extra inputs are not permitted$"), {"hy": "անհայտ դաշտ", "ru": "неизвестное поле"}),
    (
        re.compile(r"^String should have at least (?P<n>\d+) characters?$"),
        {"hy": "առնվազն {n} նիշ", "ru": "не менее {n} символов"},
    ),
    (
        re.compile(r"^String should have at most (?P<n>\d+) characters?$"),
        {"hy": "առավելագույնը {n} նիշ", "ru": "не более {n} символов"},
    ),
    (
        re.compile(r"^Input should be greater than or equal to (?P<n>[-\d.]+)$"),
        {"hy": "առնվազն {n}", "ru": "не меньше {n}"},
    ),
    (
        re.compile(r"^Input should be less than or equal to (?P<n>[-\d.]+)$"),
        {"hy": "առավելագույնը {n}", "ru": "не больше {n}"},
    ),
    (re.compile(r"^Input should be greater than (?P<n>[-\d.]+)$"), {"hy": "{n}-ից մեծ", "ru": "больше {n}"}),
    (re.compile(r"^Input should be less than (?P<n>[-\d.]+)$"), {"hy": "{n}-ից փոքր", "ru": "меньше {n}"}),
    (re.compile(r"^Input should be a valid integer"), {"hy": "ամբողջ թիվ է պետք", "ru": "нужно целое число"}),
    (re.compile(r"^Input should be a valid number"), {"hy": "թիվ է պետք", "ru": "нужно число"}),
    (re.compile(r"^Input should be a valid string"), {"hy": "տեքստ է պետք", "ru": "нужен текст"}),
    (re.compile(r"^Input should be a valid boolean"), {"hy": "այո/ոչ է պետք", "ru": "нужно да/нет"}),
    (re.compile(r"^Input should be a valid date"), {"hy": "ամսաթիվ է պետք", "ru": "нужна дата"}),
    (
        re.compile(r"^Input should be a valid datetime"),
        {"hy": "ամսաթիվ և ժամ է պետք", "ru": "нужны дата и время"},
    ),
    (re.compile(r"^Input should be a valid list"), {"hy": "ցուցակ է պետք", "ru": "нужен список"}),
    (
        re.compile(r"^Input should be a valid dictionary|^Input should be an object"),
        {"hy": "օբյեկտ է պետք", "ru": "нужен объект"},
    ),
    (
        re.compile(r"^Input should be (?P<choices>.*'.*)$"),
        {"hy": "թույլատրվածն է՝ {choices}", "ru": "допустимо: {choices}"},
    ),
    (
        re.compile(r"^List should have at least (?P<n>\d+) items?"),
        {"hy": "առնվազն {n} տարր", "ru": "не менее {n} элементов"},
    ),
    (
        re.compile(r"^List should have at most (?P<n>\d+) items?"),
        {"hy": "առավելագույնը {n} տարր", "ru": "не более {n} элементов"},
    ),
    (
        re.compile(r"^value is not a valid email address"),
        {"hy": "անվավեր էլ. հասցե", "ru": "неверный адрес почты"},
    ),
    (
        re.compile(r"^String should match pattern"),
        {"hy": "անթույլատրելի ձևաչափ", "ru": "недопустимый формат"},
    ),
    (re.compile(r"^(Input should be a valid URL|URL )"), {"hy": "անվավեր հղում", "ru": "неверная ссылка"}),
    (re.compile(r"^malformed JSON$"), {"hy": "անվավեր JSON", "ru": "неверный JSON"}),
    (re.compile(r"^required$"), {"hy": "պարտադիր", "ru": "обязательно"}),
    (re.compile(r"^NUL character$"), {"hy": "NUL նիշ", "ru": "символ NUL"}),
    (re.compile(r"^hy, ru or en$"), {"hy": "hy, ru կամ en", "ru": "hy, ru или en"}),
]

# The services' own findings (errors[].message), whole.
MESSAGES: dict[str, T] = {
    "not a PEM certificate": {"hy": "PEM վկայական չէ", "ru": "не сертификат PEM"},
    "not an unencrypted PEM private key": {
        "hy": "չգաղտնագրված PEM բանալի չէ",
        "ru": "не незашифрованный ключ PEM",
    },
    "not the certificate's key": {"hy": "վկայականի բանալին չէ", "ru": "не ключ этого сертификата"},
    "an https URL without query": {"hy": "https URL առանց հարցման մասի", "ru": "URL https без запроса"},
    "another total": {"hy": "այլ գումար", "ru": "другая сумма"},
    "required": {"hy": "պարտադիր է", "ru": "обязательно"},
    "wrong code": {"hy": "սխալ կոդ", "ru": "неверный код"},
    "must not be null": {"hy": "չի կարող դատարկ լինել", "ru": "не может быть пустым"},
    "the code or recipientName is required": {
        "hy": "պետք է կոդը կամ ստացողի անունը",
        "ru": "нужен код или имя получателя",
    },
    "unknown or not uploaded": {"hy": "անհայտ է կամ չի վերբեռնվել", "ru": "неизвестно или не загружено"},
    "required while smsEnabled": {"hy": "պարտադիր է SMS-ի համար", "ru": "обязательно при включённых SMS"},
    "refused (unresolvable or non-public)": {
        "hy": "մերժված է (չի գտնվում կամ հանրային չէ)",
        "ru": "отклонён (не находится или не публичный)",
    },
    "outside the service area": {"hy": "սպասարկման տարածքից դուրս", "ru": "вне зоны обслуживания"},
    "not uploaded for this company": {
        "hy": "այս ընկերության համար չի վերբեռնվել",
        "ru": "не загружено для этой компании",
    },
    "not in plan": {"hy": "պլանում չէ", "ru": "нет в плане"},
    "not 1..n": {"hy": "1..n չէ", "ru": "не 1..n"},
    "no active courier is on shift": {
        "hy": "հերթափոխում ակտիվ առաքիչ չկա",
        "ru": "нет активных курьеров на смене",
    },
    "must be after the start": {"hy": "պետք է լինի սկզբից հետո", "ru": "должно быть после начала"},
    "invalid date": {"hy": "անվավեր ամսաթիվ", "ru": "неверная дата"},
    "empty": {"hy": "դատարկ", "ru": "пусто"},
    "duplicates": {"hy": "կրկնություններ", "ru": "повторы"},
    "duplicate order": {"hy": "կրկնվող պատվեր", "ru": "повторный заказ"},
    "duplicate courier": {"hy": "կրկնվող առաքիչ", "ru": "повторный курьер"},
    "before today in Yerevan": {"hy": "այսօրվանից առաջ (Երևան)", "ru": "раньше сегодняшнего дня (Ереван)"},
    "already used by another order": {
        "hy": "արդեն օգտագործված է այլ պատվերում",
        "ru": "уже занято другим заказом",
    },
    "above the submitted amount": {"hy": "ավելին է հանձնվածից", "ru": "больше сданной суммы"},
    "8 to 128 characters": {"hy": "8-ից 128 նիշ", "ru": "от 8 до 128 символов"},
    "another parcel's code": {"hy": "այլ ծանրոցի կոդ", "ru": "код другой посылки"},
    "photo, signature, code, scan, name or age": {
        "hy": "photo, signature, code, scan, name կամ age",
        "ru": "photo, signature, code, scan, name или age",
    },
}


def _fill(template: str, match: re.Match[str], lang: str) -> str:
    values = {k: v for k, v in match.groupdict().items() if v is not None}
    if "status" in values:
        values["status"] = status_name(values["status"], lang)
    if "to" in values:
        values["to_status"] = status_name(values["to"], lang)
    if "kinds" in values:
        for language in ("hy", "ru"):
            named = [PROOF_KINDS.get(k, {}).get(language, k) for k in values["kinds"].split(", ")]
            values[f"kinds_{language}"] = ", ".join(named)
    if "what" in values:
        values["what_hy"] = _WHAT.get(values["what"], {}).get("hy", values["what"])
        values["what_ru"] = _WHAT.get(values["what"], {}).get("ru", values["what"])
    return template.format(**values)


def detail(text: str, lang: str) -> str:
    """``text`` (an English Problem detail) in ``lang``; itself when not known."""
    if lang == "en" or not text:
        return text
    exact = EXACT.get(text)
    if exact is not None:
        return exact.get(lang, text)
    for pattern, templates in PATTERNS:
        match = pattern.match(text)
        if match and lang in templates:
            return _fill(templates[lang], match, lang)
    return text


def message(text: str, lang: str) -> str:
    """A validation finding (``errors[].message``) in ``lang``; itself when not known (what it
    says beats a vague sentence in the language)."""
    if lang == "en" or not text:
        return text
    exact = MESSAGES.get(text) or EXACT.get(text)
    if exact is not None:
        return exact.get(lang, text)
    for pattern, templates in MESSAGE_PATTERNS:
        match = pattern.match(text)
        if match and lang in templates:
            return _fill(templates[lang], match, lang)
    return detail(text, lang)  # a finding worded as a whole sentence


_WAIT = {
    "en": ("Try again in {n} s.", "Try again in {n} min."),
    "hy": ("Փորձեք {n} վայրկյանից։", "Փորձեք {n} րոպեից։"),
    "ru": ("Повторите через {n} с.", "Повторите через {n} мин."),
}


def wait(seconds: int, lang: str) -> str:
    """The wait a ``Retry-After`` asks for, as a sentence (seconds under two minutes, else minutes
    rounded up)."""
    seconds = max(1, int(seconds))
    in_seconds, in_minutes = _WAIT.get(lang, _WAIT["en"])
    if seconds < 120:
        return in_seconds.format(n=seconds)
    return in_minutes.format(n=-(-seconds // 60))
