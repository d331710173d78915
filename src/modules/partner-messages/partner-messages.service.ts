// The message thread between admins and a partner (DESIGN.md §7 "Messages"). Attachments are
// written to the file store first; the message and its attachment rows are then committed in
// one transaction. If that fails the files are removed: a failed post leaves nothing behind.
// Listing a thread marks the other side's messages on that page as read.
import type { Static } from 'typebox';
import type { ReadStream } from 'node:fs';
import type { Db } from '../../infra/db/index.js';
import type { FileStore, StoredFile } from '../../infra/files.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso } from '../../shared/time.js';
import { partnerMessagesRepository as repo, type AttachmentRow, type MessageRow, type Sender } from './partner-messages.repository.js';
import type { Attachment, Message } from './partner-messages.schemas.js';

export interface UploadedFile extends StoredFile {
  filename: string;
  contentType: string;
}

export type AttachmentView = Static<typeof Attachment>;

export type MessageView = Static<typeof Message>;

export type Author = { kind: 'admin'; adminId: number } | { kind: 'partner' };

const attachmentView = (row: AttachmentRow): AttachmentView => ({
  id: row.id,
  filename: row.filename,
  content_type: row.contentType,
  size: row.sizeBytes,
});

const messageView = (row: MessageRow, attachments: AttachmentRow[]): MessageView => ({
  id: row.id,
  partner_id: row.partnerId,
  sender: row.sender,
  body: row.body,
  attachments: attachments.map(attachmentView),
  created_at: iso(row.createdAt),
  read_at: iso(row.readAt),
});

export class PartnerMessagesService {
  constructor(
    private readonly db: Db,
    readonly files: FileStore,
  ) {}

  /** Posts to the partner's thread; the uploaded files are the message's or are removed. */
  async post(partnerId: number, author: Author, body: string, uploads: UploadedFile[]): Promise<MessageView> {
    try {
      return await this.db.transaction(async (tx) => {
        const message = await repo.insertMessage(tx, {
          partnerId,
          sender: author.kind,
          adminId: author.kind === 'admin' ? author.adminId : null,
          body,
        });
        const attachments = await repo.insertAttachments(
          tx,
          uploads.map((u) => ({
            messageId: message.id,
            partnerId,
            filename: u.filename,
            contentType: u.contentType,
            sizeBytes: u.size,
            sha256: u.sha256,
            storageKey: u.key,
          })),
        );
        return messageView(message, attachments);
      });
    } catch (err) {
      await this.discard(uploads);
      throw err;
    }
  }

  /** Removes stored files that no committed row refers to. */
  async discard(uploads: StoredFile[]): Promise<void> {
    await Promise.all(uploads.map((u) => this.files.remove(u.key).catch(() => undefined)));
  }

  /** A page of the thread, newest first, as `viewer` sees it: the other side's messages on it become read. */
  async list(partnerId: number, viewer: Sender, page: PageWindow): Promise<{ items: MessageView[]; total: number }> {
    return this.db.transaction(async (tx) => {
      const { rows, total } = await repo.page(tx, partnerId, page.perPage, page.offset);
      const other: Sender = viewer === 'admin' ? 'partner' : 'admin';
      const read = new Map((await repo.markRead(tx, partnerId, other, rows.map((r) => r.id))).map((r) => [r.id, r.readAt]));
      const attachments = await repo.attachmentsOf(tx, partnerId, rows.map((r) => r.id));
      const items = rows.map((row) =>
        messageView(
          { ...row, readAt: read.get(row.id) ?? row.readAt },
          attachments.filter((a) => a.messageId === row.id),
        ),
      );
      return { items, total };
    });
  }

  /** An attachment of a message in the partner's thread, with its bytes; undefined if not there. */
  async attachment(
    partnerId: number,
    messageId: number,
    attachmentId: number,
  ): Promise<{ filename: string; contentType: string; size: number; stream: ReadStream } | undefined> {
    const row = await repo.findAttachment(this.db, partnerId, messageId, attachmentId);
    if (!row) return undefined;
    const file = await this.files.open(row.storageKey);
    // A row without its file is a broken store, not a missing resource: say so loudly.
    if (!file) throw new Error(`attachment ${row.id} has no file (${row.storageKey})`);
    return { filename: row.filename, contentType: row.contentType, size: file.size, stream: file.stream };
  }
}
