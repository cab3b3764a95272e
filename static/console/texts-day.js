// The day's words for bulk actions, the steered plan, stop numbers and hand-over (issue 45), in
// Armenian, Russian and English; merged into the console's TEXTS.
import {TEXTS} from "/console/texts.js";

const DAY = {
  hy: {
    selectAll: "Ընտրել բոլոր ցուցադրվածները", bulkActions: "Ընտրված պատվերների հետ", chosenCount: "Ընտրված՝ {n}",
    chooseCourier: "Ընտրեք առաքիչին", working: "Կատարվում է…", cancelReason: "Չեղարկման պատճառը",
    cancelChosen: "Չեղարկել", moveToDay: "Տեղափոխել օրը", clearChoice: "Մաքրել ընտրությունը",
    bulkDone_ready: "Պատրաստ են {n}-ը {of}-ից։", bulkDone_assign: "Նշանակված են {n}-ը {of}-ից։",
    bulkDone_cancel: "Չեղարկված են {n}-ը {of}-ից։", bulkDone_move: "Տեղափոխված են {n}-ը {of}-ից։",
    bulkFailed: "{n}-ը չհաջողվեց՝", handOver: "Փոխանցել", handOverTo: "Ում",
    handOverHint: "Պատվերը, նրա կանխիկը և ապացույցը կանցնեն մյուս առաքիչին, ով այն կտեսնի իր երթուղու վերջում։",
    handOverFrom: "հիմա՝", handedOver: "Փոխանցված է՝", stopNumber: "Կանգառ №",
    planDay: "Օր", today: "Այսօր", tomorrow: "Վաղը", pickDay: "Այլ օր", maxStops: "Առավելագույն կանգառ",
    allowLate: "Ուշացումով, քան դուրս թողնել", allCouriers: "Բոլոր առաքիչները", shiftFrom: "Սկսած", shiftUntil: "Մինչև", shiftHours: "Հերթափոխ", stopsShort: "Կանգառ",
    startAt: "Մեկնում", startGps: "GPS", startDepot: "Պահեստ", lockStop: "Ամրացնել տեղում",
    unplacedReason_capacity: "տեղ չկա (կանգառներ կամ քաշ)", unplacedReason_window: "ժամային միջակայքը հնարավոր չէ պահել",
    unplacedReason_shift_end: "հերթափոխն ավարտվում է մինչ այդ", unplacedReason_unreachable: "ճանապարհ չկա",
    unplacedReason_not_ready: "պատրաստ չէ", unplacedReason_over_limit: "1000 պատվերից դուրս", lateBy: "ուշ՝",
    minutesShort: "ր", noWindow: "առանց միջակայքի",
  },
  ru: {
    selectAll: "Выбрать все показанные", bulkActions: "С выбранными заказами", chosenCount: "Выбрано: {n}",
    chooseCourier: "Выберите курьера", working: "Выполняется…", cancelReason: "Причина отмены",
    cancelChosen: "Отменить", moveToDay: "Перенести на день", clearChoice: "Снять выбор",
    bulkDone_ready: "Готовы {n} из {of}.", bulkDone_assign: "Назначены {n} из {of}.",
    bulkDone_cancel: "Отменены {n} из {of}.", bulkDone_move: "Перенесены {n} из {of}.",
    bulkFailed: "Не вышло для {n}:", handOver: "Передать", handOverTo: "Кому",
    handOverHint: "Заказ, его наличные и подтверждение перейдут к другому курьеру; он увидит заказ в конце своего маршрута.",
    handOverFrom: "сейчас у", handedOver: "Передан:", stopNumber: "Остановка №",
    planDay: "День", today: "Сегодня", tomorrow: "Завтра", pickDay: "Другой день", maxStops: "Макс. остановок",
    allowLate: "С опозданием, а не без доставки", allCouriers: "Все курьеры", shiftFrom: "С", shiftUntil: "До", shiftHours: "Смена", stopsShort: "Точек",
    startAt: "Старт", startGps: "GPS", startDepot: "Склад", lockStop: "Закрепить на месте",
    unplacedReason_capacity: "нет места (остановки или вес)", unplacedReason_window: "окно доставки не успеть",
    unplacedReason_shift_end: "смена кончается раньше", unplacedReason_unreachable: "нет дороги",
    unplacedReason_not_ready: "не готов", unplacedReason_over_limit: "за пределами 1000 заказов", lateBy: "опоздание",
    minutesShort: "мин", noWindow: "без окна",
  },
  en: {
    selectAll: "Choose every order shown", bulkActions: "With the chosen orders", chosenCount: "{n} chosen",
    chooseCourier: "Choose a courier", working: "Working…", cancelReason: "Reason to cancel",
    cancelChosen: "Cancel", moveToDay: "Move to day", clearChoice: "Clear the choice",
    bulkDone_ready: "{n} of {of} made ready.", bulkDone_assign: "{n} of {of} assigned.",
    bulkDone_cancel: "{n} of {of} cancelled.", bulkDone_move: "{n} of {of} moved.",
    bulkFailed: "{n} could not:", handOver: "Hand over", handOverTo: "To",
    handOverHint: "The order, its cash and its proof go to the other courier, who finds it at the end of their run.",
    handOverFrom: "now with", handedOver: "Handed over to", stopNumber: "Stop",
    planDay: "Day", today: "Today", tomorrow: "Tomorrow", pickDay: "Another day", maxStops: "Max stops",
    allowLate: "Late rather than left out", allCouriers: "Every courier", shiftFrom: "From", shiftUntil: "Until", shiftHours: "Shift", stopsShort: "Stops",
    startAt: "Start", startGps: "GPS", startDepot: "Depot", lockStop: "Keep in place",
    unplacedReason_capacity: "no room (stops or weight)", unplacedReason_window: "its window cannot be met",
    unplacedReason_shift_end: "the shifts end before", unplacedReason_unreachable: "no road reaches it",
    unplacedReason_not_ready: "not ready", unplacedReason_over_limit: "beyond the 1,000 oldest", lateBy: "late by",
    minutesShort: "min", noWindow: "no window",
  },
};

Object.keys(DAY).forEach((lang) => Object.assign(TEXTS[lang], DAY[lang]));
