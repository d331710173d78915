// The points and loyalty-card modules' user-facing messages, registered in src/messages.ts.
export const pointsMessages = {
  'points.awarded': { en: 'Points awarded', lt: 'Taškai suteikti' },
  'points.deducted': { en: 'Points deducted', lt: 'Taškai nurašyti' },
  'points.adjusted': { en: 'Points adjusted', lt: 'Taškai pakoreguoti' },
  'points.bulk_applied': { en: '{count} adjustments applied', lt: 'Pritaikyta korekcijų: {count}' },
  'points.reversed': { en: 'Transaction reversed', lt: 'Operacija atšaukta' },
  'points.insufficient_balance': {
    en: 'Insufficient points balance: {available} available, {requested} requested',
    lt: 'Nepakanka taškų: turima {available}, prašoma {requested}',
  },
  'points.balance_limit': {
    en: 'The card balance may not exceed {limit} points',
    lt: 'Kortelės likutis negali viršyti {limit} taškų',
  },
  'points.award_too_large': {
    en: 'One operation may not move more than {limit} points',
    lt: 'Viena operacija negalima perkelti daugiau nei {limit} taškų',
  },
  'points.programme_inactive': {
    en: 'The card programme is not active: points cannot be earned',
    lt: 'Kortelės programa neaktyvi: taškų kaupti negalima',
  },
  'points.line_id_duplicate': { en: 'Line id {line_id} is used twice in this receipt', lt: 'Eilutės ID {line_id} kvite naudojamas du kartus' },
  'points.invalid_quantity': { en: 'Quantity must be above 0 with at most 3 decimals', lt: 'Kiekis turi būti didesnis nei 0, ne daugiau kaip 3 skaitmenys po kablelio' },
  'points.invalid_line_amount': {
    en: 'A line amount must be 0 or more EUR with at most 4 decimals',
    lt: 'Eilutės suma turi būti 0 arba daugiau EUR, ne daugiau kaip 4 skaitmenys po kablelio',
  },
  'points.amount_mismatch': { en: 'Amount must equal the sum of the lines ({sum})', lt: 'Suma turi sutapti su eilučių suma ({sum})' },
  'points.amount_required': { en: 'Send amount, or items', lt: 'Nurodykite sumą arba prekių eilutes' },
  'points.product_not_owned': { en: 'Not a product of your catalogue', lt: 'Tai ne jūsų katalogo prekė' },
  'points.card_or_programme': { en: 'Send card_id or partner_card_id (one of them)', lt: 'Nurodykite card_id arba partner_card_id (vieną iš jų)' },
  'points.previewed': { en: 'Points previewed', lt: 'Taškų peržiūra' },
  'points.receipt_used': {
    en: 'Points were already awarded for this receipt at this shop',
    lt: 'Už šį kvitą šioje parduotuvėje taškai jau suteikti',
  },
  'points.redemption_disabled': {
    en: 'Points redemption is not enabled for this card programme',
    lt: 'Šioje kortelės programoje taškų panaudojimas neįjungtas',
  },
  'points.below_redemption_minimum': {
    en: 'At least {limit} points must be redeemed at once',
    lt: 'Vienu kartu reikia panaudoti bent {limit} taškų',
  },
  'points.above_redemption_maximum': {
    en: 'At most {limit} points may be redeemed at once',
    lt: 'Vienu kartu galima panaudoti ne daugiau kaip {limit} taškų',
  },
  'points.not_reversible': {
    en: 'A transaction of type {type} cannot be reversed',
    lt: 'Šio tipo ({type}) operacijos atšaukti negalima',
  },
  'points.spend_of_reversed_earning': {
    en: 'This spend used points of an earning that was already reversed; reverse spends before the purchase that funded them',
    lt: 'Šiai operacijai panaudoti jau atšaukto kaupimo taškai; pirmiausia atšaukite panaudojimą, tik tada pirkimą',
  },
  'points.redemption_value_too_large': {
    en: 'The value of these points is larger than one transaction can hold',
    lt: 'Šių taškų vertė viršija vienos operacijos ribą',
  },
  'points.already_reversed': { en: 'The transaction was already reversed', lt: 'Operacija jau atšaukta' },
  'points.returned': { en: 'Return recorded', lt: 'Grąžinimas užregistruotas' },
  'points.not_returnable': {
    en: 'Goods of a transaction of type {type} cannot be returned',
    lt: 'Šio tipo ({type}) operacijos prekių grąžinti negalima',
  },
  'points.return_of_reversed': {
    en: 'The transaction was reversed: nothing is left to return',
    lt: 'Operacija atšaukta: grąžinti nebėra ko',
  },
  'points.return_purchase_body': {
    en: 'A purchase is returned by items or by amount (one of them)',
    lt: 'Pirkimas grąžinamas pagal prekių eilutes arba pagal sumą (vieną iš jų)',
  },
  'points.return_deduction_body': { en: 'A deduction is returned by points', lt: 'Nurašymas grąžinamas taškais' },
  'points.return_without_lines': {
    en: 'This purchase has no lines: return by amount',
    lt: 'Šis pirkimas neturi prekių eilučių: grąžinkite pagal sumą',
  },
  'points.return_by_items': {
    en: 'This purchase has lines: return by items',
    lt: 'Šis pirkimas turi prekių eilutes: grąžinkite pagal jas',
  },
  'points.unknown_line': { en: 'The purchase has no line {line_id}', lt: 'Pirkime nėra eilutės {line_id}' },
  'points.return_exceeds': {
    en: 'More than was bought: at most {left} can still be returned',
    lt: 'Daugiau nei nupirkta: dar galima grąžinti ne daugiau kaip {left}',
  },
  'points.bulk_failed': {
    en: 'No adjustment was applied: {count} rows failed',
    lt: 'Nepritaikyta nė viena korekcija: nepavyko eilučių: {count}',
  },
  'points.range_order': { en: 'Must be after from', lt: 'Turi būti vėliau nei from' },
  'points.date_out_of_range': { en: 'Must be a date from year 1 to 9999', lt: 'Turi būti data nuo 1 iki 9999 metų' },
  'points.invalid_amount': {
    en: 'Must be a positive amount in EUR with at most 4 decimals, up to 1000000000',
    lt: 'Turi būti teigiama suma eurais, ne daugiau kaip 4 skaitmenys po kablelio, iki 1000000000',
  },
  'cards.created': { en: 'Loyalty card created', lt: 'Lojalumo kortelė sukurta' },
  'cards.already_member': {
    en: 'The customer already has a card in this programme',
    lt: 'Klientas jau turi šios programos kortelę',
  },
  'cards.number_taken': { en: 'This card number is already registered', lt: 'Šis kortelės numeris jau užregistruotas' },
  'cards.programme_inactive': {
    en: 'The card programme is not active: no new cards can be issued',
    lt: 'Kortelės programa neaktyvi: naujų kortelių išduoti negalima',
  },
  'cards.lookup_required': {
    en: 'Give card_number or card_id',
    lt: 'Nurodykite card_number arba card_id',
  },
  'resource.loyalty_card': { en: 'Loyalty card', lt: 'Lojalumo kortelė' },
  'resource.partner_card': { en: 'Partner card', lt: 'Partnerio kortelė' },
  'resource.transaction': { en: 'Transaction', lt: 'Operacija' },
} as const;

type PointsMessages = typeof pointsMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends PointsMessages {}
}
