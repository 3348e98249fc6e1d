// An in-process authoritative DNS server for probe tests: UDP and TCP on one random port of
// 127.0.0.1, serving a zone the test defines in code. It follows CNAME chains inside the zone
// (as a recursive resolver would), truncates UDP answers larger than the client's EDNS size (512
// without EDNS), and can misbehave per name: an rcode instead of an answer, silence, or decoy
// responses (wrong id, wrong question) sent before the real one. Every query is logged.
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket, type OptAnswer, type Packet } from 'dns-packet';

/** A zone record: owner name, type, data (dns-packet's shapes); TTL optional. */
export type ZoneRecord = Exclude<Answer, OptAnswer>;

export interface Zone {
  records: ZoneRecord[];
  /** Names answered with this response code instead of data (2 SERVFAIL, 5 REFUSED ...). */
  rcodes?: Record<string, number>;
  /** Names never answered: the client can only time out. */
  silent?: string[];
  /** Names whose UDP answer is preceded by decoys a client must ignore (wrong id, wrong question). */
  decoyed?: string[];
  /** Names whose first UDP query is dropped, as a lost datagram would be. */
  lossy?: string[];
  /** Records appended to a name's answer section though another name owns them (a sloppy resolver). */
  strays?: Record<string, ZoneRecord[]>;
}

export interface LoggedQuery {
  transport: 'udp' | 'tcp';
  name: string;
  type: string;
  recursionDesired: boolean;
  /** The client's advertised EDNS UDP size, null without EDNS. */
  ednsSize: number | null;
}

export const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;
const MAX_CHAIN = 8;
const PLAIN_UDP_LIMIT = 512;

const key = (name: string): string => name.replace(/\.$/, '').toLowerCase();
const lengthPrefixed = (msg: Buffer): Buffer => {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(msg.length);
  return Buffer.concat([length, msg]);
};

export class DnsTestServer {
  readonly address = '127.0.0.1';
  readonly queries: LoggedQuery[] = [];
  private readonly connections = new Set<Socket>();
  private readonly dropped = new Set<string>();

  private constructor(private readonly zone: Zone, private readonly udp: UdpSocket, private readonly tcp: Server) {}

  /** Binds UDP on a random port, then TCP on the same one (retrying when TCP finds it taken). */
  static async start(zone: Zone): Promise<DnsTestServer> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const udp = createSocket('udp4');
      udp.bind(0, '127.0.0.1');
      await once(udp, 'listening');
      const tcp = createServer();
      const server = new DnsTestServer(zone, udp, tcp);
      try {
        tcp.listen(udp.address().port, '127.0.0.1');
        await once(tcp, 'listening');
      } catch {
        udp.close();
        continue;
      }
      udp.on('message', (msg, peer) => server.onUdp(msg, peer));
      tcp.on('connection', (socket) => server.onTcp(socket));
      return server;
    }
    throw new Error('no port free for both UDP and TCP');
  }

  get port(): number {
    return this.udp.address().port;
  }

  /** `ip:port`, as a check's `resolver` takes it. */
  get resolver(): string {
    return `${this.address}:${this.port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.connections) socket.destroy();
    await new Promise<void>((resolve) => this.tcp.close(() => resolve()));
    await new Promise<void>((resolve) => this.udp.close(() => resolve()));
  }

  /** Queries for `name` seen so far (any type), by transport. */
  transportsFor(name: string): Array<'udp' | 'tcp'> {
    return this.queries.filter((q) => key(q.name) === key(name)).map((q) => q.transport);
  }

  private decode(msg: Buffer, transport: 'udp' | 'tcp'): DecodedPacket | null {
    let query: DecodedPacket;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      return null;
    }
    const question = query.questions?.[0];
    if (query.type !== 'query' || question === undefined) return null;
    const opt = query.additionals?.find((a): a is OptAnswer => a.type === 'OPT');
    this.queries.push({ transport, name: question.name, type: question.type, recursionDesired: query.flag_rd, ednsSize: opt?.udpPayloadSize ?? null });
    return query;
  }

  private onUdp(msg: Buffer, peer: RemoteInfo): void {
    const query = this.decode(msg, 'udp');
    if (query === null || this.dropsFirst(query)) return;
    const response = this.respond(query);
    if (response === null) return;
    const send = (packet: Packet): void => { this.udp.send(dnsPacket.encode(packet), peer.port, peer.address); };
    if (this.isDecoyed(query)) for (const decoy of this.decoys(query)) send(decoy);
    const opt = query.additionals?.find((a): a is OptAnswer => a.type === 'OPT');
    const limit = Math.max(PLAIN_UDP_LIMIT, opt?.udpPayloadSize ?? PLAIN_UDP_LIMIT);
    const fits = dnsPacket.encodingLength(response) <= limit;
    // Too big: an empty answer with TC set tells the client to ask again over TCP.
    send(fits ? response : { ...response, flags: (response.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE, answers: [] });
  }

  private onTcp(socket: Socket): void {
    this.connections.add(socket);
    socket.on('close', () => this.connections.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const msg = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + msg.length);
        const query = this.decode(msg, 'tcp');
        const response = query && this.respond(query);
        if (response) socket.write(lengthPrefixed(dnsPacket.encode(response)));
      }
    });
  }

  /** True once per lossy name: its first UDP query goes unanswered. */
  private dropsFirst(query: DecodedPacket): boolean {
    const name = key(query.questions?.[0]?.name ?? '');
    if (!(this.zone.lossy ?? []).some((n) => key(n) === name) || this.dropped.has(name)) return false;
    this.dropped.add(name);
    return true;
  }

  private isDecoyed(query: DecodedPacket): boolean {
    const name = query.questions?.[0]?.name ?? '';
    return (this.zone.decoyed ?? []).some((n) => key(n) === key(name));
  }

  /** Responses a client must discard: another id, then the right id for another question. */
  private decoys(query: DecodedPacket): Packet[] {
    const question = query.questions?.[0];
    if (question === undefined) return [];
    const bogus = (name: string): ZoneRecord => ({ type: 'A', name, ttl: 60, data: '203.0.113.66' });
    return [
      { type: 'response', id: ((query.id ?? 0) + 1) & 0xffff, flags: dnsPacket.RECURSION_DESIRED, questions: [question], answers: [bogus(question.name)] },
      { type: 'response', id: query.id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ ...question, name: `decoy.${question.name}` }], answers: [bogus(`decoy.${question.name}`)] },
    ];
  }

  /** The full (untruncated) response, or null for a silent name. */
  private respond(query: DecodedPacket): Packet | null {
    const question = query.questions?.[0];
    if (question === undefined) return null;
    const name = key(question.name);
    if ((this.zone.silent ?? []).some((n) => key(n) === name)) return null;
    const base: Packet = {
      type: 'response',
      id: query.id,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (query.flag_rd ? dnsPacket.RECURSION_DESIRED : 0),
      questions: [question],
    };
    const rcode = Object.entries(this.zone.rcodes ?? {}).find(([n]) => key(n) === name)?.[1];
    if (rcode !== undefined) return { ...base, flags: (base.flags ?? 0) | rcode, answers: [] };
    const { answers, exists } = this.lookup(name, question.type);
    return { ...base, flags: (base.flags ?? 0) | (exists ? RCODE.NOERROR : RCODE.NXDOMAIN), answers };
  }

  /** Records of `type` at `name`, after the CNAME chain (unless CNAME itself is asked for). */
  private lookup(name: string, type: string): { answers: ZoneRecord[]; exists: boolean } {
    const at = (owner: string): ZoneRecord[] => this.zone.records.filter((r) => key(r.name) === owner);
    const answers: ZoneRecord[] = [];
    let current = name;
    for (let hop = 0; hop < MAX_CHAIN && type !== 'CNAME'; hop++) {
      const alias = at(current).find((r) => r.type === 'CNAME');
      if (alias?.type !== 'CNAME') break;
      answers.push(alias);
      current = key(alias.data);
    }
    answers.push(...at(current).filter((r) => r.type === type));
    answers.push(...Object.entries(this.zone.strays ?? {}).filter(([n]) => key(n) === name).flatMap(([, extra]) => extra));
    return { answers, exists: at(current).length > 0 };
  }
}
