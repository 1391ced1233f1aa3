/**
 * Throwaway certificate authorities for TLS tests, made with the `openssl` CLI: a CA (P-256,
 * CA:TRUE, one day) and server certificates it signs for `localhost` and `127.0.0.1` (serverAuth),
 * the shape a worker's FRONTIER_TLS_CERT_FILE / _KEY_FILE take. Nothing here is trusted anywhere
 * unless a test hands the CA file to a client.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface ServerCertificate {
  certFile: string;
  keyFile: string;
}

export interface TestCa {
  /** The CA's own certificate (PEM): what a client must trust. */
  caFile: string;
  /** A certificate for localhost / 127.0.0.1 signed by this CA, written under `name`. */
  issueServerCertificate(name: string): ServerCertificate;
}

const P256 = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

function openssl(args: string[]): void {
  execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
}

/** A new CA in `dir`, its files prefixed with `name` (several CAs may share a directory). */
export function createTestCa(dir: string, name: string): TestCa {
  const caFile = join(dir, `${name}-ca.pem`);
  const caKeyFile = join(dir, `${name}-ca.key`);
  openssl([
    "req",
    "-x509",
    ...P256,
    "-days",
    "1",
    "-subj",
    `/CN=Frontier test CA ${name}`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
    "-keyout",
    caKeyFile,
    "-out",
    caFile,
  ]);
  return {
    caFile,
    issueServerCertificate(serverName: string): ServerCertificate {
      const base = join(dir, `${name}-${serverName}`);
      const files = { certFile: `${base}.pem`, keyFile: `${base}.key` };
      const extensions = `${base}.ext`;
      writeFileSync(
        extensions,
        [
          "subjectAltName=DNS:localhost,IP:127.0.0.1",
          "basicConstraints=critical,CA:FALSE",
          "keyUsage=critical,digitalSignature",
          "extendedKeyUsage=serverAuth",
        ].join("\n"),
      );
      openssl(["req", "-new", ...P256, "-subj", "/CN=localhost", "-keyout", files.keyFile, "-out", `${base}.csr`]);
      openssl([
        "x509",
        "-req",
        "-in",
        `${base}.csr`,
        "-CA",
        caFile,
        "-CAkey",
        caKeyFile,
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        extensions,
        "-out",
        files.certFile,
      ]);
      return files;
    },
  };
}
