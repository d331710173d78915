// The partner messages module's user-facing messages, registered in src/messages.ts.
export const partnerMessagesMessages = {
  'messages.sent': { en: 'Message sent', lt: 'Žinutė išsiųsta' },
  'messages.file_too_large': {
    en: 'The file "{filename}" is larger than {limit} bytes',
    lt: 'Failas „{filename}“ didesnis nei {limit} baitų',
  },
  'messages.too_many_files': {
    en: 'At most {limit} files may be attached to one message',
    lt: 'Prie vienos žinutės galima pridėti ne daugiau kaip {limit} failų',
  },
  'messages.too_many_parts': {
    en: 'The form has too many fields or parts',
    lt: 'Formoje per daug laukų ar dalių',
  },
  'messages.malformed_form': {
    en: 'The multipart form is malformed or incomplete',
    lt: 'Netinkama arba nepilna multipart forma',
  },
  'messages.unsupported_media_type': {
    en: 'Unsupported content type; send application/json or multipart/form-data',
    lt: 'Nepalaikomas turinio tipas; siųskite application/json arba multipart/form-data',
  },
  'resource.message': { en: 'Message', lt: 'Pranešimas' },
  'resource.attachment': { en: 'Attachment', lt: 'Priedas' },
} as const;

type PartnerMessagesMessages = typeof partnerMessagesMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends PartnerMessagesMessages {}
}
