// The words of delivery fee zones and shop statements (issue 47), in Armenian, Russian and English;
// merged into the console's TEXTS.
import {TEXTS} from "/console/texts.js";

const MONEY = {
  hy: {
    tabMoney: "Վճարներ և խանութներ", feeZones: "Առաքման վճարի գոտիներ",
    feeZonesHint: "Սեղմեք քարտեզին՝ գոտու անկյունները ավելացնելու համար, ապա պահպանեք։ Համընկնող գոտիներից գործում է առաջինը գծվածը։",
    feeName: "Գոտու անունը", feeBase: "Հիմնական վճար, դր.", feePerKm: "Մեկ կմ ճանապարհով, դր.", feeThreshold: "Անվճար քաշ, կգ",
    feePerKg: "Յուրաքանչյուր կգ ավելին, դր.", feeCod: "Կանխիկի մասնաբաժին, հիմնակետ", feeUndo: "Հեռացնել վերջին անկյունը",
    feeClear: "Մաքրել", feeSave: "Պահպանել գոտին", feeRules: "Կանոններ", feeCorners: "Անկյուններ՝ {n}", feeEdit: "Խմբագրել",
    feeDelete: "Ջնջել", feeDeleteConfirm: "Ջնջե՞լ գոտին", feeSaved: "Գոտին պահպանված է։", feeNeedCorners: "Նշեք առնվազն 3 անկյուն։",
    deliveryFee: "Առաքման վճար", audit_fee_changed: "առաքման վճարը փոխվել է", feeChange: "Փոխել վճարը", feeChanged: "Վճարը փոխված է։",
    stTitle: "Խանութների քաղվածքներ", stShop: "Խանութ", stDelivered: "Առաքված", stReturned: "Վերադարձված",
    stCollected: "Հավաքված կանխիկ", stFees: "Վճարներ", stNet: "Վճարման ենթակա", stPrint: "Տպելու էջ",
    stReference: "Վճարման հղում", stPay: "Նշել վճարված", stPaid: "Վճարված է", stBalanced: "Կանխիկը համընկնում է դրամարկղի հաշվառման հետ. հանձնված՝ {handed}, առաքիչների մոտ՝ {held}։",
    stUnbalanced: "Կանխիկը չի համընկնում դրամարկղի հաշվառման հետ ({ledger})։", stNoShops: "Խանութներ չկան. ստեղծեք ինտեգրման բանալի։",
  },
  ru: {
    tabMoney: "Тарифы и магазины", feeZones: "Зоны стоимости доставки",
    feeZonesHint: "Щёлкайте по карте, чтобы добавить углы зоны, затем сохраните. Где зоны пересекаются, действует нарисованная первой.",
    feeName: "Название зоны", feeBase: "Базовая цена, драм", feePerKm: "За км по дорогам, драм", feeThreshold: "Бесплатный вес, кг",
    feePerKg: "За каждый кг сверх, драм", feeCod: "Доля наличных, б.п.", feeUndo: "Убрать последний угол",
    feeClear: "Очистить", feeSave: "Сохранить зону", feeRules: "Правила", feeCorners: "Углов: {n}", feeEdit: "Изменить",
    feeDelete: "Удалить", feeDeleteConfirm: "Удалить зону?", feeSaved: "Зона сохранена.", feeNeedCorners: "Отметьте хотя бы 3 угла.",
    deliveryFee: "Стоимость доставки", audit_fee_changed: "стоимость доставки изменена", feeChange: "Изменить стоимость", feeChanged: "Стоимость изменена.",
    stTitle: "Выписки магазинов", stShop: "Магазин", stDelivered: "Доставлено", stReturned: "Возвращено",
    stCollected: "Получено наличными", stFees: "Стоимость доставки", stNet: "К выплате", stPrint: "Страница для печати",
    stReference: "Номер платежа", stPay: "Отметить оплату", stPaid: "Оплачено", stBalanced: "Наличные сходятся с кассовым учётом: сдано {handed}, у курьеров {held}.",
    stUnbalanced: "Наличные не сходятся с кассовым учётом ({ledger}).", stNoShops: "Магазинов нет: создайте ключ интеграции.",
  },
  en: {
    tabMoney: "Fees and shops", feeZones: "Delivery fee zones",
    feeZonesHint: "Click the map to add the zone's corners, then save. Where zones overlap, the first drawn applies.",
    feeName: "Zone name", feeBase: "Base fee, AMD", feePerKm: "Per km on roads, AMD", feeThreshold: "Free weight, kg",
    feePerKg: "Per kg above, AMD", feeCod: "Share of cash, basis points", feeUndo: "Remove last corner",
    feeClear: "Clear", feeSave: "Save zone", feeRules: "Rules", feeCorners: "Corners: {n}", feeEdit: "Edit",
    feeDelete: "Delete", feeDeleteConfirm: "Delete the zone?", feeSaved: "Zone saved.", feeNeedCorners: "Mark at least 3 corners.",
    deliveryFee: "Delivery fee", audit_fee_changed: "delivery fee changed", feeChange: "Change fee", feeChanged: "Fee changed.",
    stTitle: "Shop statements", stShop: "Shop", stDelivered: "Delivered", stReturned: "Returned",
    stCollected: "Cash collected", stFees: "Fees", stNet: "Net owed", stPrint: "Printable page",
    stReference: "Payment reference", stPay: "Mark paid", stPaid: "Paid", stBalanced: "The cash matches the cash ledger: handed over {handed}, with couriers {held}.",
    stUnbalanced: "The cash does not match the cash ledger ({ledger}).", stNoShops: "No shops: create an integration key.",
  },
};
for (const [language, words] of Object.entries(MONEY)) { Object.assign(TEXTS[language], words); }
