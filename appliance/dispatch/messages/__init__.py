"""Messages to recipients (issue 28): SMS through the company's SMPP provider and e-mail through
the appliance's SMTP outbox, queued in the order change's transaction and sent by a leased worker."""
