import { formatMoney } from '../ui.tsx';

/** An amount as the portal's API gives it (a decimal string) in the programme currency, formatted by Intl. */
export const money = (amount: string | number, currency: string) => formatMoney(Number(amount), currency);
