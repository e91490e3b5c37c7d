import { createServer, Server, Socket } from 'node:net';
import { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { DomainError } from '@dcr/domain';
import { MailTransport } from './mail-transport';

/**
 * A minimal SMTP server on loopback that answers every recipient with `rcptReply` (a real SMTP
 * dialogue: greeting, EHLO, MAIL FROM, RCPT TO), as a mail server refusing or deferring an address does.
 */
async function smtpServer(rcptReply: string): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.write('220 mail.test ESMTP\r\n');
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('utf8');
      let end: number;
      while ((end = buffered.indexOf('\r\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 mail.test\r\n');
        else if (verb === 'MAIL') socket.write('250 OK\r\n');
        else if (verb === 'RCPT') socket.write(`${rcptReply}\r\n`);
        else if (verb === 'RSET') socket.write('250 OK\r\n');
        else if (verb === 'QUIT') socket.end('221 Bye\r\n');
        else socket.write('500 unknown\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('MailTransport over SMTP', () => {
  const address = 'dave.secret@example.org';
  const mail = { to: address, subject: 'Your sign-in code: 123456', text: 'Your sign-in code is 123456.', html: '<p>Your sign-in code is 123456.</p>' };
  const transportFor = (url: string) =>
    new MailTransport({} as never, { env: { MAIL_TRANSPORT: 'smtp', SMTP_URL: url, NODE_ENV: 'production', MAIL_FROM: 'Service <no-reply@service.test>' } } as never);

  let warnings: string[];
  beforeEach(() => {
    warnings = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
  });
  afterEach(() => jest.restoreAllMocks());

  it("answers an address the server refuses for good as a 422 on email, and logs the failure without the server's words (they name the address)", async () => {
    const server = await smtpServer(`550 5.1.1 <${address}>: Recipient address rejected: User unknown`);
    try {
      const failure = await transportFor(server.url).send(mail).then(() => undefined, (error: unknown) => error);
      expect(failure).toBeInstanceOf(DomainError);
      expect([(failure as DomainError).code, (failure as DomainError).details]).toEqual(['validation_failed', [{ field: 'email', reason: 'the mail server refused this address: check it, or use another' }]]);
      expect(warnings).toEqual(['mail to a recipient failed (EENVELOPE 550)']);
      expect(warnings.join('\n')).not.toContain(address);
    } finally {
      await server.close();
    }
  });

  it('answers a deferral (4xx) as a 503 to try again later, and logs it without the address either', async () => {
    const server = await smtpServer(`451 4.7.1 <${address}>: greylisted, try again later`);
    try {
      const failure = (await transportFor(server.url).send(mail).then(() => undefined, (error: unknown) => error)) as DomainError;
      expect([failure.code, failure.extra]).toEqual(['service_unavailable', { retry_after: 5 }]);
      expect(warnings.join('\n')).not.toContain(address);
      expect(warnings).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
