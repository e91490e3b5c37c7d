const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const WORDING = {
  en: {
    subject: (code: string) => `Your sign-in code: ${code}`,
    body: (code: string, minutes: number) =>
      `Your sign-in code is ${code}. It is valid for ${minutes} minutes. If you did not ask for it, ignore this message.`,
  },
  de: {
    subject: (code: string) => `Ihr Anmeldecode: ${code}`,
    body: (code: string, minutes: number) =>
      `Ihr Anmeldecode lautet ${code}. Er ist ${minutes} Minuten gültig. Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese Nachricht.`,
  },
} as const;

/** The one-time code mail, in the session's language (English when there is no wording for it). */
export function signInMail(locale: string, code: string, minutes: number): { subject: string; text: string; html: string } {
  const wording = WORDING[locale.slice(0, 2) as keyof typeof WORDING] ?? WORDING.en;
  const text = wording.body(code, minutes);
  return { subject: wording.subject(code), text, html: `<p>${escape(text)}</p>` };
}
