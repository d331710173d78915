// Issued card numbers: 16 digits, the last a Luhn check digit, so that a till can refuse a
// mistyped number before asking the server. The first digit is 9 (no card-network
// prefix); the 14 digits after it come from the CSPRNG.
import { randomInt } from 'node:crypto';

export function luhnCheckDigit(digits: string): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

export function isValidLuhn(number: string): boolean {
  return /^\d{2,}$/.test(number) && luhnCheckDigit(number.slice(0, -1)) === Number(number.slice(-1));
}

export function issueCardNumber(): string {
  let body = '9';
  for (let i = 0; i < 14; i++) body += String(randomInt(0, 10));
  return body + String(luhnCheckDigit(body));
}
