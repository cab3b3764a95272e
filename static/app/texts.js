// The courier app's words in Armenian (first), Russian and English.
export const TEXTS = {
  hy: {
    callDispatcher: "Զանգել դիսպետչերին",
    needsAttention: "Ուշադրություն՝", heldCash: "Ձեր մոտ է, դեռ չգրանցված՝ ", enterCodeAgain: "Նորից մուտքագրել կոդը",
    dispatcherSees: "Դիսպետչերը տեսնում է սա։ Մուտքագրեք ճիշտ կոդը կամ զանգեք դիսպետչերին։", willTell: "Դիսպետչերին կտեղեկացվի կապը վերականգնվելիս։",
    settled: "Հարցը լուծված է դիսպետչերի հետ",
    title: "Առաքիչ", signInTitle: "Մուտք", email: "Էլ. փոստ", password: "Գաղտնաբառ", signIn: "Մուտք գործել",
    signOut: "Ելք", wrongPassword: "Սխալ էլ. փոստ կամ գաղտնաբառ։", notCourier: "Այս հավելվածը առաքիչների համար է․ դիսպետչերները՝ ",
    offline: "Կապ չկա", online: "Կապ կա", queued: "ուղարկման սպասող", failed: "Չստացվեց՝ ",
    tabRun: "Երթուղի", tabCash: "Կանխիկ", tabHistory: "Պատմություն", tabEarnings: "Վաստակ", tabProfile: "Պրոֆիլ",
    shiftOff: "Հերթափոխը փակ է", shiftActive: "Հերթափոխում եք", shiftBreak: "Ընդմիջում",
    startShift: "Սկսել հերթափոխը", breakStart: "Ընդմիջում", breakEnd: "Շարունակել", endShift: "Ավարտել հերթափոխը",
    gpsOn: "GPS-ը միացված է", gpsOff: "GPS-ը անջատված է", gpsDenied: "Թույլատրեք տեղորոշումը՝ դիսպետչերը ձեզ չի տեսնում։",
    noRun: "Բաց պատվերներ չկան։", pickedUp: "Վերցրել եմ", arrived: "Տեղում եմ", delivered: "Հանձնված է", failedMove: "Չհաջողվեց",
    navigate: "Նավիգացիա", map: "Քարտեզ", call: "Զանգել", entrance: "Մուտք ", floor: "Հարկ ", apartment: "Բն. ", intercom: "Դոմոֆոն ", noteToCourier: "Նշում՝ ", handedOverFrom: "Փոխանցել է՝ ", codeNeeded: "Պետք է կոդ", cod: "Գանձել՝ ",
    recipientName: "Ով ստացավ", code: "Առաքման կոդ", photo: "Լուսանկար", collected: "Գանձված գումար, դրամ", notes: "Նշումներ",
    send: "Ուղարկել", cancel: "Փակել", reason: "Պատճառ", recipient_absent: "Ոչ ոք տանը չէր", refused: "Հրաժարվեցին",
    wrong_address: "Սխալ հասցե", other: "Այլ", willSend: "Կուղարկվի կապը վերականգնվելիս։", sent: "Ուղարկված է",
    wrongCode: "Կոդը սխալ է։", locked: "Կոդը արգելափակված է։ Զանգեք դիսպետչերին՝ նոր կոդի համար։",
    outstanding: "Ձեր մոտ՝ ", handover: "Հանձնել կանխիկը", awaiting: "Սպասում է հաստատման՝ ", nothing: "Ոչինչ չկա։", fiscal: "Կտրոն №",
    today: "Այսօր", week: "Այս շաբաթ", allTime: "Ընդհանուր", deliveries: "առաքում", yourPay: "Ձեր վարձը՝", ordersValue: "պատվերների արժեքը՝", noPayRule: "վարձատրության կանոն չկա", displayName: "Անուն",
    phone: "Հեռախոս", vehicle: "Տրանսպորտ", save: "Պահպանել", saved: "Պահպանված է", status_delivered: "Առաքված", status_failed: "Չհաջողված",
  },
  ru: {
    callDispatcher: "Позвонить диспетчеру",
    needsAttention: "Требует внимания:", heldCash: "У вас на руках, ещё не учтено: ", enterCodeAgain: "Ввести код снова",
    dispatcherSees: "Диспетчер это видит. Введите верный код или позвоните диспетчеру.", willTell: "Диспетчер узнает, когда появится связь.",
    settled: "Решено с диспетчером",
    title: "Курьер", signInTitle: "Вход", email: "Эл. почта", password: "Пароль", signIn: "Войти",
    signOut: "Выйти", wrongPassword: "Неверная почта или пароль.", notCourier: "Это приложение для курьеров; диспетчерам — ",
    offline: "Нет связи", online: "На связи", queued: "ждут отправки", failed: "Не удалось: ",
    tabRun: "Маршрут", tabCash: "Наличные", tabHistory: "История", tabEarnings: "Заработок", tabProfile: "Профиль",
    shiftOff: "Смена закрыта", shiftActive: "На смене", shiftBreak: "Перерыв",
    startShift: "Начать смену", breakStart: "Перерыв", breakEnd: "Продолжить", endShift: "Закончить смену",
    gpsOn: "GPS включён", gpsOff: "GPS выключен", gpsDenied: "Разрешите геолокацию: диспетчер вас не видит.",
    noRun: "Открытых заказов нет.", pickedUp: "Забрал", arrived: "На месте", delivered: "Доставлено", failedMove: "Не удалось",
    navigate: "Навигация", map: "Карта", call: "Позвонить", entrance: "Подъезд ", floor: "Этаж ", apartment: "Кв. ", intercom: "Домофон ", noteToCourier: "Заметка: ", handedOverFrom: "Передал: ", codeNeeded: "Нужен код", cod: "Получить: ",
    recipientName: "Кто получил", code: "Код доставки", photo: "Фото", collected: "Получено, драм", notes: "Заметки",
    send: "Отправить", cancel: "Закрыть", reason: "Причина", recipient_absent: "Никого не было", refused: "Отказались",
    wrong_address: "Неверный адрес", other: "Другое", willSend: "Отправится, когда появится связь.", sent: "Отправлено",
    wrongCode: "Неверный код.", locked: "Код заблокирован. Позвоните диспетчеру за новым кодом.",
    outstanding: "У вас на руках: ", handover: "Сдать наличные", awaiting: "Ждёт подтверждения: ", nothing: "Пусто.", fiscal: "Чек №",
    today: "Сегодня", week: "Эта неделя", allTime: "Всего", deliveries: "доставок", yourPay: "Ваша оплата:", ordersValue: "стоимость заказов:", noPayRule: "правило оплаты не задано", displayName: "Имя",
    phone: "Телефон", vehicle: "Транспорт", save: "Сохранить", saved: "Сохранено", status_delivered: "Доставлен", status_failed: "Не доставлен",
  },
  en: {
    callDispatcher: "Call the dispatcher",
    needsAttention: "Needs attention:", heldCash: "In your hands, not recorded yet: ", enterCodeAgain: "Enter the code again",
    dispatcherSees: "The dispatcher sees this. Enter the right code, or call the dispatcher.", willTell: "The dispatcher will be told when the connection returns.",
    settled: "Settled with the dispatcher",
    title: "Courier", signInTitle: "Sign in", email: "Email", password: "Password", signIn: "Sign in",
    signOut: "Sign out", wrongPassword: "Wrong email or password.", notCourier: "This app is for couriers; dispatchers use ",
    offline: "Offline", online: "Online", queued: "waiting to send", failed: "Could not do it: ",
    tabRun: "Run", tabCash: "Cash", tabHistory: "History", tabEarnings: "Earnings", tabProfile: "Profile",
    shiftOff: "Off shift", shiftActive: "On shift", shiftBreak: "On break",
    startShift: "Start shift", breakStart: "Take a break", breakEnd: "Back to work", endShift: "End shift",
    gpsOn: "GPS on", gpsOff: "GPS off", gpsDenied: "Allow location: the dispatcher cannot see you.",
    noRun: "No open orders.", pickedUp: "Picked up", arrived: "Arrived", delivered: "Delivered", failedMove: "Failed",
    navigate: "Navigate", map: "Map", call: "Call", entrance: "Entrance ", floor: "Floor ", apartment: "Apt ", intercom: "Intercom ", noteToCourier: "Note: ", handedOverFrom: "Handed over from ", codeNeeded: "Code needed", cod: "Collect: ",
    recipientName: "Received by", code: "Delivery code", photo: "Photo", collected: "Collected, AMD", notes: "Notes",
    send: "Send", cancel: "Close", reason: "Reason", recipient_absent: "Nobody there", refused: "Refused",
    wrong_address: "Wrong address", other: "Other", willSend: "Will be sent when the connection returns.", sent: "Sent",
    wrongCode: "Wrong code.", locked: "The code is locked. Call the dispatcher for a new code.",
    outstanding: "You hold: ", handover: "Hand over the cash", awaiting: "Awaiting confirmation: ", nothing: "Nothing here.", fiscal: "Receipt no.",
    today: "Today", week: "This week", allTime: "All time", deliveries: "deliveries", yourPay: "Your pay:", ordersValue: "orders worth", noPayRule: "no pay rule set", displayName: "Name",
    phone: "Phone", vehicle: "Vehicle", save: "Save", saved: "Saved", status_delivered: "Delivered", status_failed: "Failed",
  },
};

// Planned days and "pick up all" at the depot (issue 45).
Object.assign(TEXTS.hy, {pickUpAll: "Վերցրել եմ բոլորը", pickedUpAll: "Վերցված է՝ {n}"});
Object.assign(TEXTS.ru, {pickUpAll: "Забрал все", pickedUpAll: "Забрано: {n}"});
Object.assign(TEXTS.en, {pickUpAll: "Picked up all", pickedUpAll: "{n} picked up"});
// Issue 47: proof of delivery (signature, the parcel's code, an age check) and the depot scan.
Object.assign(TEXTS.hy, {scan: "Սկանավորել", parcelCode: "Ծանրոցի կոդ", signature: "Ստացողի ստորագրությունը", clearSignature: "Մաքրել",
  ageChecked: "Տարիքը ստուգված է", scanAtDepot: "Սկանավորել ծանրոցները պահեստում", pickUpScanned: "Վերցրել եմ սկանավորվածները",
  scanning: "Ուղղեք տեսախցիկը կոդին…", noCamera: "Տեսախցիկը հասանելի չէ՝ մուտքագրեք կոդը։", notInRun: "Ձեր երթուղում չէ՝ ",
  needsSignature: "Պետք է ստացողի ստորագրությունը։", needsPhoto: "Պետք է լուսանկար։", needsScan: "Սկանավորեք ծանրոցի կոդը։",
  needsAge: "Ստուգեք ստացողի տարիքը։", wrongParcel: "Այս կոդը այս պատվերինը չէ։", pickUpRefused: "Չվերցվեց՝ {n}"});
Object.assign(TEXTS.ru, {scan: "Сканировать", parcelCode: "Код посылки", signature: "Подпись получателя", clearSignature: "Стереть",
  ageChecked: "Возраст проверен", scanAtDepot: "Сканировать посылки на складе", pickUpScanned: "Забрал отсканированные",
  scanning: "Наведите камеру на код…", noCamera: "Камера недоступна — введите код.", notInRun: "Не в вашем маршруте: ",
  needsSignature: "Нужна подпись получателя.", needsPhoto: "Нужно фото.", needsScan: "Отсканируйте код посылки.",
  needsAge: "Проверьте возраст получателя.", wrongParcel: "Этот код не от этого заказа.", pickUpRefused: "Не забрано: {n}"});
Object.assign(TEXTS.en, {scan: "Scan", parcelCode: "Parcel code", signature: "Recipient's signature", clearSignature: "Clear",
  ageChecked: "Age checked", scanAtDepot: "Scan parcels at the depot", pickUpScanned: "Pick up the scanned",
  scanning: "Point the camera at the code…", noCamera: "No camera: type the code.", notInRun: "Not in your run: ",
  needsSignature: "The recipient's signature is needed.", needsPhoto: "A photo is needed.", needsScan: "Scan the parcel's code.",
  needsAge: "Check the recipient's age.", wrongParcel: "This code is not this order's.", pickUpRefused: "Not picked up: {n}"});
// Landmark names (issue 49), read out by assistive technology.
const LANDMARK_TEXTS = {hy: {menu: "Ընտրացանկ"}, ru: {menu: "Меню"}, en: {menu: "Menu"}};
for (const [language, words] of Object.entries(LANDMARK_TEXTS)) { Object.assign(TEXTS[language], words); }

// Map words (issue 49): the stop's map dialog — MapLibre's own controls (its `locale` option), the
// map's name and the names its markers carry for assistive technology.
const MAP_TEXTS = {
  hy: {zoomIn: "Մեծացնել", zoomOut: "Փոքրացնել", resetBearing: "Հյուսիսը վերև", attribution: "Քարտեզի աղբյուրները",
       stopMapLabel: "Կանգառի քարտեզ", markerCourier: "Դուք", markerDestination: "Առաքման հասցեն"},
  ru: {zoomIn: "Приблизить", zoomOut: "Отдалить", resetBearing: "Север вверху", attribution: "Источники карты",
       stopMapLabel: "Карта остановки", markerCourier: "Вы", markerDestination: "Адрес доставки"},
  en: {zoomIn: "Zoom in", zoomOut: "Zoom out", resetBearing: "North up", attribution: "Map sources",
       stopMapLabel: "Map of the stop", markerCourier: "You", markerDestination: "The delivery address"},
};
for (const [language, words] of Object.entries(MAP_TEXTS)) { Object.assign(TEXTS[language], words); }
