// The sockets of this node by channel, and presence membership. Delivery builds each frame
// once and writes it to every local subscriber but the excluded one.
import { frame, type ChannelEvent } from './protocol.js';

export interface Subscriber {
  readonly socketId: string;
  send(frame: string): void;
}

export interface PresenceMember {
  userId: string;
  userInfo: unknown;
}

interface PresenceState {
  /** user_id → its info and the local sockets that joined as it (Pusher counts users, not sockets). */
  members: Map<string, { info: unknown; sockets: Set<Subscriber> }>;
}

export class LocalHub {
  private readonly channels = new Map<string, Set<Subscriber>>();
  private readonly presence = new Map<string, PresenceState>();

  /** Add a socket to a channel; false if it was there already. */
  subscribe(channel: string, sub: Subscriber): boolean {
    let set = this.channels.get(channel);
    if (!set) this.channels.set(channel, (set = new Set()));
    if (set.has(sub)) return false;
    set.add(sub);
    return true;
  }

  unsubscribe(channel: string, sub: Subscriber): boolean {
    const set = this.channels.get(channel);
    if (!set?.delete(sub)) return false;
    if (set.size === 0) this.channels.delete(channel);
    return true;
  }

  isSubscribed(channel: string, sub: Subscriber): boolean {
    return this.channels.get(channel)?.has(sub) ?? false;
  }

  subscriberCount(channel: string): number {
    return this.channels.get(channel)?.size ?? 0;
  }

  channelCount(): number {
    return this.channels.size;
  }

  deliver(ev: ChannelEvent): number {
    const set = this.channels.get(ev.channel);
    if (!set || set.size === 0) return 0;
    const text = frame(ev.event, ev.data, ev.channel, ev.userId);
    let sent = 0;
    for (const sub of set) {
      if (sub.socketId === ev.exceptSocketId) continue;
      sub.send(text);
      sent++;
    }
    return sent;
  }

  presenceMembers(channel: string): PresenceMember[] {
    const state = this.presence.get(channel);
    if (!state) return [];
    return [...state.members].map(([userId, m]) => ({ userId, userInfo: m.info }));
  }

  presenceUserCount(channel: string): number {
    return this.presence.get(channel)?.members.size ?? 0;
  }

  /** Whether this user may join: already a member, or the channel has room. */
  presenceHasRoom(channel: string, userId: string, max: number): boolean {
    const members = this.presence.get(channel)?.members;
    return !members || members.has(userId) || members.size < max;
  }

  /**
   * Record a socket joining as `userId`; returns true when the user is new to the channel
   * (member_added goes out once per user, not per connection).
   */
  presenceJoin(channel: string, sub: Subscriber, member: PresenceMember): boolean {
    let state = this.presence.get(channel);
    if (!state) this.presence.set(channel, (state = { members: new Map() }));
    const existing = state.members.get(member.userId);
    if (existing) {
      existing.sockets.add(sub);
      return false;
    }
    state.members.set(member.userId, { info: member.userInfo, sockets: new Set([sub]) });
    return true;
  }

  /** Record a socket leaving; returns true when that was the user's last socket in the channel. */
  presenceLeave(channel: string, sub: Subscriber, userId: string): boolean {
    const state = this.presence.get(channel);
    const member = state?.members.get(userId);
    if (!state || !member || !member.sockets.delete(sub)) return false;
    if (member.sockets.size > 0) return false;
    state.members.delete(userId);
    if (state.members.size === 0) this.presence.delete(channel);
    return true;
  }
}
