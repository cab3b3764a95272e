"""The courier's app: GPS, shifts, own orders and their status, cash, earnings, history."""
