"""Shops as integrations: integration keys, webhook endpoints and signed order webhooks."""
