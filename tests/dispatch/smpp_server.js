// A real SMPP 3.4 server (the npm package `smpp`, installed by `make setup` into .tools) for the
// recipient-message tests: node smpp_server.js PORT SYSTEM_ID PASSWORD RECEIPT_DELAY_MS [CERT KEY]
// (with CERT and KEY it speaks TLS from the first byte).
// It answers binds (refusing wrong credentials), acknowledges every submit_sm with a message id,
// and RECEIPT_DELAY_MS later sends a delivery receipt (deliver_sm, stat:DELIVRD) on the session
// that submitted (a number ending in 0000 is refused: ESME_RINVDSTADR), or, when that session has closed, keeps it for the next session that binds (as
// a provider stores receipts for an absent client). Every PDU it receives is printed as a JSON line.
"use strict";
const path = require("path");
const smpp = require(path.join(__dirname, "..", "..", ".tools", "node_modules", "smpp"));

const fs = require("fs");
const [port, systemId, password, delayArg, certPath, keyPath] = process.argv.slice(2);
const tlsOptions = certPath ? { cert: fs.readFileSync(certPath), key: fs.readFileSync(keyPath) } : {};
const delay = Number(delayArg || 100);
const kept = [];
const bound = new Set();
let nextId = 1;

function report(event) {
  process.stdout.write(JSON.stringify(event) + "\n");
}

function receipt(id) {
  const now = "2611251200";
  return {
    source_addr: "37491123456",
    destination_addr: "Arev",
    esm_class: smpp.ESM_CLASS.MC_DELIVERY_RECEIPT,
    short_message: `id:${id} sub:001 dlvrd:001 submit date:${now} done date:${now} stat:DELIVRD err:000 text:`,
    receipted_message_id: id,
    message_state: 2,
  };
}

function deliver(session, id) {
  const to = bound.has(session) ? session : bound.values().next().value;
  if (to) {
    to.deliver_sm(receipt(id));
    report({ event: "receipt_sent", message_id: id });
  } else {
    kept.push(id);
  }
}

const server = smpp.createServer(tlsOptions, (session) => {
  session.on("error", () => {});
  session.on("close", () => bound.delete(session));
  for (const command of ["bind_transceiver", "bind_transmitter", "bind_receiver"]) {
    session.on(command, (pdu) => {
      report({ event: command, system_id: pdu.system_id });
      if (pdu.system_id !== systemId || pdu.password !== password) {
        session.send(pdu.response({ command_status: smpp.ESME_RBINDFAIL }));
        session.close();
        return;
      }
      session.send(pdu.response({ system_id: "test-smsc" }));
      bound.add(session);
      while (kept.length) deliver(session, kept.shift());
    });
  }
  session.on("submit_sm", (pdu) => {
    if (pdu.destination_addr.endsWith("0000")) {  // a number the provider refuses
      report({ event: "submit_sm_refused", destination_addr: pdu.destination_addr });
      session.send(pdu.response({ command_status: smpp.ESME_RINVDSTADR }));
      return;
    }
    const id = `m${nextId++}`;
    const body = pdu.short_message || {};
    const text = typeof body.message === "string" ? body.message : String(body.message || body);
    report({
      event: "submit_sm",
      message_id: id,
      source_addr: pdu.source_addr,
      source_addr_ton: pdu.source_addr_ton,
      destination_addr: pdu.destination_addr,
      data_coding: pdu.data_coding,
      esm_class: pdu.esm_class,
      registered_delivery: pdu.registered_delivery,
      udh: (body.udh || []).map((b) => Buffer.from(b).toString("hex")),
      text: text,
      ucs2_hex: pdu.data_coding === 8 ? Buffer.from(text, "utf16le").swap16().toString("hex") : null,
    });
    session.send(pdu.response({ message_id: id }));
    setTimeout(() => deliver(session, id), delay);
  });
  session.on("deliver_sm_resp", () => report({ event: "deliver_sm_resp" }));
  session.on("enquire_link", (pdu) => session.send(pdu.response()));
  session.on("unbind", (pdu) => {
    bound.delete(session);
    session.send(pdu.response());
    session.close();
  });
});

server.listen(Number(port), "127.0.0.1", () => report({ event: "listening", port: Number(port) }));
process.on("SIGTERM", () => process.exit(0));
