// The shops module's user-facing messages, registered in src/messages.ts.
export const shopsMessages = {
  'shops.code_taken': { en: 'Another shop of yours already has this code', lt: 'Kita jūsų parduotuvė jau turi šį kodą' },
  'shops.country_format': {
    en: 'Must be a two-letter ISO 3166-1 country code',
    lt: 'Turi būti dviejų raidžių ISO 3166-1 šalies kodas',
  },
  'shops.csv_malformed': { en: 'The CSV is malformed (line {line})', lt: 'Netinkamas CSV ({line} eilutė)' },
  'shops.csv_no_header': { en: 'The CSV needs a header row naming its columns', lt: 'CSV turi turėti antraštės eilutę su stulpelių pavadinimais' },
  'shops.unknown_column': { en: 'Unknown column', lt: 'Nežinomas stulpelis' },
  'shops.duplicate_column': { en: 'The column appears twice', lt: 'Stulpelis pasikartoja' },
  'shops.json_not_array': { en: 'Send a JSON array of shops', lt: 'Siųskite parduotuvių JSON masyvą' },
  'shops.too_many_rows': { en: 'At most {limit} rows in one import', lt: 'Viename importe daugiausia {limit} eilučių' },
  'shops.row_repeats': { en: 'Row {row} already names this shop', lt: '{row} eilutėje ši parduotuvė jau nurodyta' },
  'shops.import_failed': {
    en: 'Nothing was imported: fix the rows listed in errors',
    lt: 'Niekas neimportuota: pataisykite klaidose nurodytas eilutes',
  },
  'shops.imported': { en: '{created} shops created, {updated} updated', lt: 'Sukurta parduotuvių: {created}, atnaujinta: {updated}' },
  'shops.inverted_range': { en: 'Must not be after "to"', lt: 'Negali būti vėliau nei „to“' },
  'shops.range_too_long': { en: 'The window may span at most {limit} days', lt: 'Laikotarpis gali apimti daugiausia {limit} d.' },
  'shops.file_required': { en: 'Send the CSV as multipart field "file"', lt: 'Siųskite CSV kaip multipart lauką „file“' },
  'shops.unsupported_media_type': {
    en: 'Unsupported content type; send text/csv, application/json or multipart/form-data',
    lt: 'Nepalaikomas turinio tipas; siųskite text/csv, application/json arba multipart/form-data',
  },
  'shops.malformed_form': { en: 'The multipart form is malformed or incomplete', lt: 'Netinkama arba nepilna multipart forma' },
} as const;

type ShopsMessages = typeof shopsMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends ShopsMessages {}
}
