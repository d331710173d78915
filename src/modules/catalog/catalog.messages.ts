// The catalog module's user-facing messages, registered in src/messages.ts. Import errors are
// stored as these keys with their parameters and translated when read.
export const catalogMessages = {
  'catalog.import_queued': { en: 'Import queued', lt: 'Importas įtrauktas į eilę' },
  'catalog.feed_deleted': { en: 'Feed subscription stopped', lt: 'Srauto prenumerata sustabdyta' },
  'catalog.validated': { en: 'Feed checked', lt: 'Srautas patikrintas' },
  'catalog.feed_malformed': {
    en: 'The XML is not well-formed at line {line}, column {column}: {detail}',
    lt: 'XML netaisyklingas {line} eilutėje, {column} stulpelyje: {detail}',
  },
  'catalog.feed_entities': {
    en: 'A DOCTYPE declaring entities is not accepted (nothing was expanded or fetched)',
    lt: 'DOCTYPE su esybių deklaracijomis nepriimamas (niekas nebuvo išskleista ar parsiųsta)',
  },
  'catalog.feed_construct_too_large': {
    en: 'One text, comment or declaration is longer than {limit} characters',
    lt: 'Vienas tekstas, komentaras ar deklaracija ilgesnis nei {limit} simbolių',
  },
  'catalog.feed_memory': {
    en: 'Reading the feed needed more than the import\'s memory limit ({limit} MB)',
    lt: 'Srauto skaitymui prireikė daugiau nei importo atminties riba ({limit} MB)',
  },
  'catalog.categories_limit': {
    en: 'The feed has more than {limit} categories; the rest are not linked',
    lt: 'Sraute daugiau nei {limit} kategorijų; likusios nesusietos',
  },
  'catalog.feed_too_deep': { en: 'Elements are nested deeper than {limit} levels', lt: 'Elementai įdėti giliau nei {limit} lygių' },
  'catalog.feed_too_large': {
    en: 'The feed is larger than {limit} bytes (XML_IMPORT_MAX_BYTES, counted after decompression)',
    lt: 'Srautas didesnis nei {limit} baitų (XML_IMPORT_MAX_BYTES, skaičiuojant išskleistą)',
  },
  'catalog.feed_gzip': { en: 'The gzip data is broken: {detail}', lt: 'Sugadinti gzip duomenys: {detail}' },
  'catalog.feed_encoding': {
    en: 'The encoding "{encoding}" is not known; use UTF-8 or another standard encoding (windows-1250/-1251/-1252, ISO-8859-x, KOI8-R, UTF-16…)',
    lt: 'Koduotė „{encoding}“ nežinoma; naudokite UTF-8 ar kitą standartinę koduotę (windows-1250/-1251/-1252, ISO-8859-x, KOI8-R, UTF-16…)',
  },
  'catalog.feed_no_items': {
    en: 'No recognised item element (product, item, offer, SHOPITEM, feed/entry or offers/o; names are case-sensitive) was found',
    lt: 'Nerasta atpažįstamo prekės elemento (product, item, offer, SHOPITEM, feed/entry ar offers/o; raidžių dydis svarbus)',
  },
  'catalog.feed_fetch_failed': { en: 'The feed could not be fetched: {detail}', lt: 'Srauto nepavyko parsiųsti: {detail}' },
  'catalog.feed_http_status': { en: 'The feed URL answered HTTP {status}', lt: 'Srauto adresas atsakė HTTP {status}' },
  'catalog.feed_url_refused': { en: 'The feed URL is refused: {detail}', lt: 'Srauto adresas atmestas: {detail}' },
  'catalog.feed_file_missing': { en: 'The uploaded file is no longer available', lt: 'Įkeltas failas nebepasiekiamas' },
  'catalog.import_interrupted': {
    en: 'The import was interrupted {attempts} times (a node stopped while running it) and was given up',
    lt: 'Importas buvo nutrauktas {attempts} kartus (mazgas sustojo jo vykdymo metu), todėl atsisakyta',
  },
  'catalog.item_no_name': { en: 'The item has no name; skipped', lt: 'Prekė neturi pavadinimo; praleista' },
  'catalog.item_no_key': {
    en: 'The item has no id, external_id, sku or ean; skipped',
    lt: 'Prekė neturi id, external_id, sku ar ean; praleista',
  },
  'catalog.item_too_large': { en: 'The item holds more than {limit} characters of text; skipped', lt: 'Prekėje daugiau nei {limit} simbolių teksto; praleista' },
  'catalog.item_value_too_long': {
    en: '{field} is longer than {limit} characters; skipped',
    lt: '{field} ilgesnis nei {limit} simbolių; praleista',
  },
  'catalog.item_price_invalid': { en: '{field} "{value}" is not a price; skipped', lt: '{field} „{value}“ nėra kaina; praleista' },
  'catalog.item_price_decimals': {
    en: '{field} "{value}" has more than 4 decimal places; skipped',
    lt: '{field} „{value}“ turi daugiau nei 4 skaitmenis po kablelio; praleista',
  },
  'catalog.item_value_unreadable': {
    en: '{field} "{value}" could not be read; left empty',
    lt: '{field} „{value}“ neperskaitomas; paliktas tuščias',
  },
  'catalog.item_duplicate': {
    en: 'Another item with the key {key} came earlier in this feed; skipped',
    lt: 'Ankstesnė šio srauto prekė turi tą patį raktą {key}; praleista',
  },
  'catalog.item_oldprice_ignored': {
    en: 'oldprice "{oldprice}" is not above price "{price}"; ignored (price is the regular price)',
    lt: 'oldprice „{oldprice}“ nėra didesnė už price „{price}“; nepaisoma (price yra įprasta kaina)',
  },
  'catalog.replace_nothing_accepted': {
    en: 'Replace mode: no item of this feed was accepted, so no product was deactivated',
    lt: 'Pakeitimo režimas: nepriimta nė viena šio srauto prekė, todėl jokia prekė neišjungta',
  },
  'catalog.replace_mass_deactivation': {
    en: 'Replace mode: {count} of {total} active imported products are missing from this feed; more than half, so none was deactivated (send allow_mass_deactivation: true if intended)',
    lt: 'Pakeitimo režimas: šiame sraute trūksta {count} iš {total} aktyvių importuotų prekių; daugiau nei pusė, todėl nė viena neišjungta (jei taip ir norėta, siųskite allow_mass_deactivation: true)',
  },
  'catalog.item_unknown_category': {
    en: 'Category id {id} is not defined in the feed; not linked',
    lt: 'Kategorija su id {id} sraute neapibrėžta; nesusieta',
  },
  'catalog.mapping_unknown_field': { en: 'Not a product field', lt: 'Ne prekės laukas' },
  'catalog.file_required': { en: 'Send the feed as multipart field "file" or as an XML body', lt: 'Siųskite srautą kaip multipart lauką „file“ arba XML turinį' },
  'catalog.unsupported_media_type': {
    en: 'Unsupported content type; send multipart/form-data, application/xml, text/xml or application/gzip',
    lt: 'Nepalaikomas turinio tipas; siųskite multipart/form-data, application/xml, text/xml arba application/gzip',
  },
  'catalog.malformed_form': { en: 'The multipart form is malformed or incomplete', lt: 'Netinkama arba nepilna multipart forma' },
  'catalog.mapping_not_json': { en: 'Must be a JSON object of field → tag', lt: 'Turi būti JSON objektas laukas → žyma' },
  'resource.product': { en: 'Product', lt: 'Prekė' },
  'resource.import': { en: 'Import', lt: 'Importas' },
  'resource.feed': { en: 'Feed subscription', lt: 'Srauto prenumerata' },
} as const;

type CatalogMessages = typeof catalogMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends CatalogMessages {}
}
