const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const WORDING = {
  en: {
    subject: (title: string) => `Your consent receipt: ${title}`,
    body: (title: string, purposes: string, recordId: string) =>
      `Your consent to "${title}" was recorded (record ${recordId}). You agreed to: ${purposes}. You can see your records and withdraw your consent at any time here:`,
    none: 'nothing beyond the information you were given',
  },
  de: {
    subject: (title: string) => `Ihr Einwilligungsbeleg: ${title}`,
    body: (title: string, purposes: string, recordId: string) =>
      `Ihre Einwilligung zu „${title}“ wurde erfasst (Beleg ${recordId}). Sie haben zugestimmt: ${purposes}. Hier sehen Sie Ihre Einwilligungen und können sie jederzeit widerrufen:`,
    none: 'nichts über die erhaltenen Informationen hinaus',
  },
} as const;

/**
 * The receipt mail a person gets when their consent is committed: what they agreed to, the record
 * id, and the link to their records page (the credential-free withdrawal entry; no token in it).
 */
export function receiptMail(locale: string, input: { title: string; granted: string[]; recordId: string; recordsUrl: string }): { subject: string; text: string; html: string } {
  const wording = WORDING[locale.slice(0, 2) as keyof typeof WORDING] ?? WORDING.en;
  const purposes = input.granted.length > 0 ? input.granted.join(', ') : wording.none;
  const sentence = wording.body(input.title, purposes, input.recordId);
  return {
    subject: wording.subject(input.title),
    text: `${sentence}\n${input.recordsUrl}\n`,
    html: `<p>${escape(sentence)}</p><p><a href="${escape(input.recordsUrl)}">${escape(input.recordsUrl)}</a></p>`,
  };
}
