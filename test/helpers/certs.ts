// Certificates made in the test, so expiry dates are chosen relative to the test's own clock: a CA,
// leaves it issues, and self-signed leaves, each with a chosen CN and validity window. Keys come
// from node:crypto (native, fast) and are signed with node-forge.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

const DAY_MS = 86_400_000;

/** PEM key and certificate as `tls.createServer` / `createSecureContext` take them. */
export interface KeyAndCert {
  key: string;
  /** The leaf, followed by its issuer when a CA issued it. */
  cert: string;
}

export interface TestCa extends KeyAndCert {
  commonName: string;
}

export interface LeafOptions {
  commonName: string;
  notAfter: Date;
  /** Defaults to 30 days before `notAfter` (or before now, when that is earlier). */
  notBefore?: Date;
  /** The issuing CA; omitted means self-signed (issuer CN = subject CN). */
  issuer?: TestCa;
}

let leafKeyPem: string | undefined;

function newKeyPem(): string {
  return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
}

/** One key for every leaf: the tests judge dates and names, not keys, and this keeps them fast. */
function sharedLeafKey(): string {
  leafKeyPem ??= newKeyPem();
  return leafKeyPem;
}

function buildCert(subjectCn: string, keyPem: string, notBefore: Date, notAfter: Date, signer: { cn: string; keyPem: string }, isCa: boolean): string {
  const key = forge.pki.privateKeyFromPem(keyPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  // A positive serial: the high bit of the first byte cleared.
  cert.serialNumber = `01${randomBytes(8).toString('hex')}`;
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = notAfter;
  cert.setSubject([{ name: 'commonName', value: subjectCn }]);
  cert.setIssuer([{ name: 'commonName', value: signer.cn }]);
  cert.setExtensions(isCa
    ? [{ name: 'basicConstraints', cA: true }, { name: 'keyUsage', keyCertSign: true, cRLSign: true }]
    : [{ name: 'basicConstraints', cA: false }, { name: 'subjectAltName', altNames: [{ type: 2, value: subjectCn }] }]);
  cert.sign(forge.pki.privateKeyFromPem(signer.keyPem), forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}

/** A CA valid for ten years around now. */
export function createCa(commonName: string): TestCa {
  const key = newKeyPem();
  const now = Date.now();
  const cert = buildCert(commonName, key, new Date(now - 365 * DAY_MS), new Date(now + 3650 * DAY_MS), { cn: commonName, keyPem: key }, true);
  return { commonName, key, cert };
}

/** A leaf certificate with the chosen CN and dates, issued by `issuer` or self-signed. */
export function createLeaf(options: LeafOptions): KeyAndCert {
  const key = sharedLeafKey();
  const notBefore = options.notBefore ?? new Date(Math.min(Date.now(), options.notAfter.getTime()) - 30 * DAY_MS);
  const signer = options.issuer ? { cn: options.issuer.commonName, keyPem: options.issuer.key } : { cn: options.commonName, keyPem: key };
  const leaf = buildCert(options.commonName, key, notBefore, options.notAfter, signer, false);
  return { key, cert: options.issuer ? leaf + options.issuer.cert : leaf };
}

/** `now` plus a number of days (fractional allowed), for choosing a not-after. */
export const daysAfter = (now: Date, days: number): Date => new Date(now.getTime() + days * DAY_MS);
