--
-- PostgreSQL database dump
--

\restrict DpG7GaWVjcXxObjiLKTRZLWTKN2IEkWn26KZ7bcMciSNLugjaQFffFGRcleV9vt

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: ledger_entry_append_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.ledger_entry_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'ledger_entry is append-only'; END; $$;


--
-- Name: payout_approval_append_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.payout_approval_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'payout_approval is append-only'; END; $$;


--
-- Name: payout_transition_append_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.payout_transition_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'payout_transition is append-only'; END; $$;


--
-- Name: signed_payload_append_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.signed_payload_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'signed_payload is append-only'; END; $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: broadcast; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.broadcast (
    id integer NOT NULL,
    payout_id integer,
    purpose character varying(16) NOT NULL,
    chain_id character varying(32) NOT NULL,
    wallet character varying(42) NOT NULL,
    nonce bigint NOT NULL,
    raw text NOT NULL,
    digest character varying(80) NOT NULL,
    tx_hash character varying(66) NOT NULL,
    max_fee_per_gas character varying(78) NOT NULL,
    max_priority_fee_per_gas character varying(78) NOT NULL,
    gas_limit bigint NOT NULL,
    status character varying(16) NOT NULL,
    mined_tx_hash character varying(66),
    mined_block bigint,
    mined_block_hash character varying(66),
    fee_minor character varying(78),
    created_at timestamp without time zone NOT NULL,
    updated_at timestamp without time zone NOT NULL,
    signed_block bigint
);


--
-- Name: broadcast_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.broadcast_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: broadcast_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.broadcast_id_seq OWNED BY public.broadcast.id;


--
-- Name: chain_cursor; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chain_cursor (
    chain_id character varying(32) NOT NULL,
    next_block bigint NOT NULL,
    holder character varying(200),
    lease_until timestamp without time zone,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: custody_account; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.custody_account (
    id integer NOT NULL,
    operator_id character varying(64) NOT NULL,
    account integer NOT NULL,
    next_index bigint NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: custody_account_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.custody_account_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: custody_account_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.custody_account_id_seq OWNED BY public.custody_account.id;


--
-- Name: custody_fingerprint; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.custody_fingerprint (
    id integer NOT NULL,
    fingerprint character varying(16) NOT NULL,
    recorded_at timestamp without time zone NOT NULL
);


--
-- Name: deposit; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.deposit (
    id integer NOT NULL,
    transfer_id character varying(64) NOT NULL,
    operator_id character varying(64) NOT NULL,
    address_id integer NOT NULL,
    chain_id character varying(32) NOT NULL,
    tx_hash character varying(66) NOT NULL,
    output_index integer NOT NULL,
    asset_code character varying(16) NOT NULL,
    amount_minor character varying(78) NOT NULL,
    block_height bigint NOT NULL,
    block_hash character varying(66) NOT NULL,
    status character varying(16) NOT NULL,
    detected_at timestamp without time zone NOT NULL,
    confirmed_at timestamp without time zone,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: deposit_address; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.deposit_address (
    id integer NOT NULL,
    address_id character varying(64) NOT NULL,
    operator_id character varying(64) NOT NULL,
    chain_id character varying(32) NOT NULL,
    account_ref character varying(128) NOT NULL,
    address character varying(42) NOT NULL,
    custody_account integer NOT NULL,
    derivation_index bigint NOT NULL,
    watch_from bigint NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: deposit_address_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.deposit_address_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: deposit_address_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.deposit_address_id_seq OWNED BY public.deposit_address.id;


--
-- Name: deposit_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.deposit_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: deposit_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.deposit_id_seq OWNED BY public.deposit.id;


--
-- Name: export_job; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.export_job (
    id integer NOT NULL,
    job_id character varying(64) NOT NULL,
    operator_id character varying(64) NOT NULL,
    report_type character varying(16) NOT NULL,
    asset_code character varying(16) NOT NULL,
    from_time timestamp without time zone NOT NULL,
    to_time timestamp without time zone NOT NULL,
    request_hash character varying(64) NOT NULL,
    status character varying(16) NOT NULL,
    row_count bigint,
    attempts integer NOT NULL,
    next_attempt_at timestamp without time zone,
    lease_until timestamp without time zone,
    last_error character varying(500),
    created_at timestamp without time zone NOT NULL,
    completed_at timestamp without time zone,
    lease_holder character varying(200)
);


--
-- Name: export_job_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.export_job_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: export_job_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.export_job_id_seq OWNED BY public.export_job.id;


--
-- Name: export_row; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.export_row (
    job_id integer NOT NULL,
    seq bigint NOT NULL,
    period character varying(10) NOT NULL,
    asset_code character varying(16) NOT NULL,
    count bigint NOT NULL,
    total_amount character varying(90) NOT NULL,
    total_fee character varying(90) NOT NULL,
    as_of character varying(32) NOT NULL
);


--
-- Name: ledger_account; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_account (
    id integer NOT NULL,
    operator_id character varying(64) NOT NULL,
    chain_id character varying(32) NOT NULL,
    asset_code character varying(16) NOT NULL,
    account character varying(16) NOT NULL,
    balance_minor character varying(80) NOT NULL,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: ledger_account_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.ledger_account_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: ledger_account_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.ledger_account_id_seq OWNED BY public.ledger_account.id;


--
-- Name: ledger_entry; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_entry (
    id integer NOT NULL,
    journal character varying(40) NOT NULL,
    kind character varying(32) NOT NULL,
    operator_id character varying(64) NOT NULL,
    chain_id character varying(32) NOT NULL,
    asset_code character varying(16) NOT NULL,
    account character varying(16) NOT NULL,
    amount_minor character varying(80) NOT NULL,
    ref character varying(80),
    memo character varying(500),
    actor character varying(200),
    created_at timestamp without time zone NOT NULL
);


--
-- Name: ledger_entry_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.ledger_entry_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: ledger_entry_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.ledger_entry_id_seq OWNED BY public.ledger_entry.id;


--
-- Name: operator; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.operator (
    id character varying(64) NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: operator_control; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.operator_control (
    operator_id character varying(64) NOT NULL,
    ledger_mode character varying(16) NOT NULL,
    paused boolean NOT NULL,
    paused_by character varying(200),
    paused_at timestamp without time zone,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: operator_destination; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.operator_destination (
    id integer NOT NULL,
    operator_id character varying(64) NOT NULL,
    chain_id character varying(32) NOT NULL,
    address character varying(42) NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: operator_destination_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.operator_destination_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: operator_destination_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.operator_destination_id_seq OWNED BY public.operator_destination.id;


--
-- Name: operator_limit; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.operator_limit (
    id integer NOT NULL,
    operator_id character varying(64) NOT NULL,
    chain_id character varying(32) NOT NULL,
    asset_code character varying(16) NOT NULL,
    max_payout_minor character varying(80),
    daily_volume_minor character varying(80),
    approval_above_minor character varying(80),
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: operator_limit_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.operator_limit_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: operator_limit_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.operator_limit_id_seq OWNED BY public.operator_limit.id;


--
-- Name: operator_secret; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.operator_secret (
    id character varying(64) NOT NULL,
    operator_id character varying(64) NOT NULL,
    ciphertext bytea NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: payout; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.payout (
    id integer NOT NULL,
    operator_id character varying(64) NOT NULL,
    payout_id character varying(64) NOT NULL,
    idempotency_key character varying(128) NOT NULL,
    instruction_hash character varying(64) NOT NULL,
    asset character varying(16) NOT NULL,
    chain_id character varying(32) NOT NULL,
    amount_minor character varying(39) NOT NULL,
    destination character varying(256) NOT NULL,
    status character varying(16) NOT NULL,
    tx_hash character varying(130),
    reason character varying(500),
    signed_payload_digest character varying(130),
    created_at timestamp without time zone NOT NULL,
    updated_at timestamp without time zone NOT NULL,
    lease_until timestamp without time zone,
    next_attempt_at timestamp without time zone,
    work_attempts integer DEFAULT 0 NOT NULL,
    fee_minor character varying(78),
    lease_holder character varying(200)
);


--
-- Name: payout_approval; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.payout_approval (
    id integer NOT NULL,
    payout_id integer NOT NULL,
    decision character varying(16) NOT NULL,
    decided_by character varying(200) NOT NULL,
    decided_at timestamp without time zone NOT NULL
);


--
-- Name: payout_approval_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.payout_approval_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: payout_approval_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.payout_approval_id_seq OWNED BY public.payout_approval.id;


--
-- Name: payout_attempt; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.payout_attempt (
    id integer NOT NULL,
    payout_id integer NOT NULL,
    outcome character varying(32) NOT NULL,
    tx_hash character varying(130),
    occurred_at timestamp without time zone NOT NULL
);


--
-- Name: payout_attempt_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.payout_attempt_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: payout_attempt_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.payout_attempt_id_seq OWNED BY public.payout_attempt.id;


--
-- Name: payout_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.payout_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: payout_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.payout_id_seq OWNED BY public.payout.id;


--
-- Name: payout_transition; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.payout_transition (
    id integer NOT NULL,
    payout_id integer NOT NULL,
    from_status character varying(16),
    to_status character varying(16) NOT NULL,
    occurred_at timestamp without time zone NOT NULL
);


--
-- Name: payout_transition_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.payout_transition_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: payout_transition_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.payout_transition_id_seq OWNED BY public.payout_transition.id;


--
-- Name: projection; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.projection (
    name character varying(32) NOT NULL,
    last_event_id bigint NOT NULL,
    built_through timestamp without time zone,
    holder character varying(200),
    lease_until timestamp without time zone
);


--
-- Name: projection_gap; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.projection_gap (
    name character varying(32) NOT NULL,
    event_id bigint NOT NULL,
    seen_at timestamp without time zone NOT NULL
);


--
-- Name: report_row; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.report_row (
    id integer NOT NULL,
    operator_id character varying(64) NOT NULL,
    report_type character varying(16) NOT NULL,
    asset_code character varying(16) NOT NULL,
    period character varying(10) NOT NULL,
    count bigint NOT NULL,
    total_amount character varying(90) NOT NULL,
    total_fee character varying(90) NOT NULL,
    as_of timestamp without time zone NOT NULL
);


--
-- Name: report_row_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.report_row_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: report_row_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.report_row_id_seq OWNED BY public.report_row.id;


--
-- Name: scanned_block; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.scanned_block (
    chain_id character varying(32) NOT NULL,
    number bigint NOT NULL,
    hash character varying(66) NOT NULL
);


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    name character varying(200) NOT NULL,
    applied_at character varying(40) NOT NULL
);


--
-- Name: seen_signature; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.seen_signature (
    signature character varying(64) NOT NULL,
    expires_at bigint NOT NULL
);


--
-- Name: signed_payload; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.signed_payload (
    id integer NOT NULL,
    broadcast_id integer NOT NULL,
    tx_hash character varying(66) NOT NULL,
    digest character varying(80) NOT NULL,
    raw text NOT NULL,
    max_fee_per_gas character varying(78) NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: signed_payload_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.signed_payload_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: signed_payload_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.signed_payload_id_seq OWNED BY public.signed_payload.id;


--
-- Name: sweep; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sweep (
    id integer NOT NULL,
    chain_id character varying(32) NOT NULL,
    asset_code character varying(16) NOT NULL,
    deposit_address_id integer NOT NULL,
    address character varying(42) NOT NULL,
    status character varying(16) NOT NULL,
    amount_minor character varying(90),
    fee_minor character varying(90),
    topup_minor character varying(90),
    topup_id integer,
    broadcast_id integer,
    tx_hash character varying(66),
    reason character varying(500),
    planned_at timestamp without time zone NOT NULL,
    created_at timestamp without time zone NOT NULL,
    updated_at timestamp without time zone NOT NULL
);


--
-- Name: sweep_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.sweep_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: sweep_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.sweep_id_seq OWNED BY public.sweep.id;


--
-- Name: treasury_balance; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.treasury_balance (
    chain_id character varying(32) NOT NULL,
    asset_code character varying(16) NOT NULL,
    role character varying(16) NOT NULL,
    address character varying(42) NOT NULL,
    on_chain_minor character varying(90) NOT NULL,
    expected_minor character varying(90) NOT NULL,
    low_balance boolean NOT NULL,
    checked_at timestamp without time zone NOT NULL
);


--
-- Name: treasury_finding; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.treasury_finding (
    id integer NOT NULL,
    key character varying(255) NOT NULL,
    kind character varying(32) NOT NULL,
    critical boolean NOT NULL,
    chain_id character varying(32) NOT NULL,
    asset_code character varying(16) NOT NULL,
    address character varying(42) NOT NULL,
    expected_minor character varying(90) NOT NULL,
    actual_minor character varying(90) NOT NULL,
    detail text NOT NULL,
    sticky boolean NOT NULL,
    first_seen_at timestamp without time zone NOT NULL,
    last_seen_at timestamp without time zone NOT NULL,
    acknowledged_at timestamp without time zone,
    acknowledged_by character varying(200)
);


--
-- Name: treasury_finding_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.treasury_finding_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: treasury_finding_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.treasury_finding_id_seq OWNED BY public.treasury_finding.id;


--
-- Name: treasury_run; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.treasury_run (
    name character varying(32) NOT NULL,
    holder character varying(200),
    lease_until timestamp without time zone,
    checked_at timestamp without time zone,
    next_run_at timestamp without time zone,
    last_error character varying(500)
);


--
-- Name: wallet; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.wallet (
    id integer NOT NULL,
    chain_id character varying(32) NOT NULL,
    address character varying(42) NOT NULL,
    next_nonce bigint NOT NULL,
    fence_reason text,
    verified_block bigint,
    scan_block bigint
);


--
-- Name: wallet_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.wallet_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: wallet_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.wallet_id_seq OWNED BY public.wallet.id;


--
-- Name: webhook_delivery; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_delivery (
    id integer NOT NULL,
    event_id integer NOT NULL,
    endpoint_id integer NOT NULL,
    status character varying(16) NOT NULL,
    attempts integer NOT NULL,
    next_attempt_at timestamp without time zone,
    lease_until timestamp without time zone,
    last_error character varying(500),
    delivered_at timestamp without time zone,
    created_at timestamp without time zone NOT NULL,
    lease_holder character varying(200)
);


--
-- Name: webhook_delivery_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.webhook_delivery_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: webhook_delivery_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.webhook_delivery_id_seq OWNED BY public.webhook_delivery.id;


--
-- Name: webhook_endpoint; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_endpoint (
    id integer NOT NULL,
    endpoint_id character varying(64) NOT NULL,
    operator_id character varying(64) NOT NULL,
    url character varying(2048) NOT NULL,
    secret bytea NOT NULL,
    active boolean NOT NULL,
    failing_since timestamp without time zone,
    disabled_at timestamp without time zone,
    last_error character varying(500),
    created_at timestamp without time zone NOT NULL
);


--
-- Name: webhook_endpoint_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.webhook_endpoint_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: webhook_endpoint_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.webhook_endpoint_id_seq OWNED BY public.webhook_endpoint.id;


--
-- Name: webhook_event; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_event (
    id integer NOT NULL,
    event_id character varying(64) NOT NULL,
    operator_id character varying(64) NOT NULL,
    event_type character varying(64) NOT NULL,
    payload text NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: webhook_event_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.webhook_event_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: webhook_event_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.webhook_event_id_seq OWNED BY public.webhook_event.id;


--
-- Name: webhook_subscription; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_subscription (
    id integer NOT NULL,
    subscription_id character varying(64) NOT NULL,
    endpoint_id integer NOT NULL,
    event_type character varying(64) NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: webhook_subscription_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.webhook_subscription_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: webhook_subscription_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.webhook_subscription_id_seq OWNED BY public.webhook_subscription.id;


--
-- Name: broadcast id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.broadcast ALTER COLUMN id SET DEFAULT nextval('public.broadcast_id_seq'::regclass);


--
-- Name: custody_account id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.custody_account ALTER COLUMN id SET DEFAULT nextval('public.custody_account_id_seq'::regclass);


--
-- Name: deposit id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deposit ALTER COLUMN id SET DEFAULT nextval('public.deposit_id_seq'::regclass);


--
-- Name: deposit_address id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deposit_address ALTER COLUMN id SET DEFAULT nextval('public.deposit_address_id_seq'::regclass);


--
-- Name: export_job id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.export_job ALTER COLUMN id SET DEFAULT nextval('public.export_job_id_seq'::regclass);


--
-- Name: ledger_account id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_account ALTER COLUMN id SET DEFAULT nextval('public.ledger_account_id_seq'::regclass);


--
-- Name: ledger_entry id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_entry ALTER COLUMN id SET DEFAULT nextval('public.ledger_entry_id_seq'::regclass);


--
-- Name: operator_destination id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operator_destination ALTER COLUMN id SET DEFAULT nextval('public.operator_destination_id_seq'::regclass);


--
-- Name: operator_limit id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operator_limit ALTER COLUMN id SET DEFAULT nextval('public.operator_limit_id_seq'::regclass);


--
-- Name: payout id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payout ALTER COLUMN id SET DEFAULT nextval('public.payout_id_seq'::regclass);


--
-- Name: payout_approval id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payout_approval ALTER COLUMN id SET DEFAULT nextval('public.payout_approval_id_seq'::regclass);


--
-- Name: payout_attempt id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payout_attempt ALTER COLUMN id SET DEFAULT nextval('public.payout_attempt_id_seq'::regclass);


--
-- Name: payout_transition id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payout_transition ALTER COLUMN id SET DEFAULT nextval('public.payout_transition_id_seq'::regclass);


--
-- Name: report_row id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.report_row ALTER COLUMN id SET DEFAULT nextval('public.report_row_id_seq'::regclass);


--
-- Name: signed_payload id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.signed_payload ALTER COLUMN id SET DEFAULT nextval('public.signed_payload_id_seq'::regclass);


--
-- Name: sweep id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sweep ALTER COLUMN id SET DEFAULT nextval('public.sweep_id_seq'::regclass);


--
-- Name: treasury_finding id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.treasury_finding ALTER COLUMN id SET DEFAULT nextval('public.treasury_finding_id_seq'::regclass);


--
-- Name: wallet id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.wallet ALTER COLUMN id SET DEFAULT nextval('public.wallet_id_seq'::regclass);


--
-- Name: webhook_delivery id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_delivery ALTER COLUMN id SET DEFAULT nextval('public.webhook_delivery_id_seq'::regclass);


--
-- Name: webhook_endpoint id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoint ALTER COLUMN id SET DEFAULT nextval('public.webhook_endpoint_id_seq'::regclass);


--
-- Name: webhook_event id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_event ALTER COLUMN id SET DEFAULT nextval('public.webhook_event_id_seq'::regclass);


--
-- Name: webhook_subscription id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_subscription ALTER COLUMN id SET DEFAULT nextval('public.webhook_subscription_id_seq'::regclass);


--
-- Data for Name: broadcast; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.broadcast (id, payout_id, purpose, chain_id, wallet, nonce, raw, digest, tx_hash, max_fee_per_gas, max_priority_fee_per_gas, gas_limit, status, mined_tx_hash, mined_block, mined_block_hash, fee_minor, created_at, updated_at, signed_block) FROM stdin;
\.


--
-- Data for Name: chain_cursor; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.chain_cursor (chain_id, next_block, holder, lease_until, updated_at) FROM stdin;
\.


--
-- Data for Name: custody_account; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.custody_account (id, operator_id, account, next_index, created_at) FROM stdin;
\.


--
-- Data for Name: custody_fingerprint; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.custody_fingerprint (id, fingerprint, recorded_at) FROM stdin;
\.


--
-- Data for Name: deposit; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.deposit (id, transfer_id, operator_id, address_id, chain_id, tx_hash, output_index, asset_code, amount_minor, block_height, block_hash, status, detected_at, confirmed_at, updated_at) FROM stdin;
\.


--
-- Data for Name: deposit_address; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.deposit_address (id, address_id, operator_id, chain_id, account_ref, address, custody_account, derivation_index, watch_from, created_at) FROM stdin;
\.


--
-- Data for Name: export_job; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.export_job (id, job_id, operator_id, report_type, asset_code, from_time, to_time, request_hash, status, row_count, attempts, next_attempt_at, lease_until, last_error, created_at, completed_at, lease_holder) FROM stdin;
\.


--
-- Data for Name: export_row; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.export_row (job_id, seq, period, asset_code, count, total_amount, total_fee, as_of) FROM stdin;
\.


--
-- Data for Name: ledger_account; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_account (id, operator_id, chain_id, asset_code, account, balance_minor, updated_at) FROM stdin;
\.


--
-- Data for Name: ledger_entry; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ledger_entry (id, journal, kind, operator_id, chain_id, asset_code, account, amount_minor, ref, memo, actor, created_at) FROM stdin;
\.


--
-- Data for Name: operator; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.operator (id, created_at) FROM stdin;
op_previousrelease	2026-11-28 08:45:14.729554
\.


--
-- Data for Name: operator_control; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.operator_control (operator_id, ledger_mode, paused, paused_by, paused_at, updated_at) FROM stdin;
\.


--
-- Data for Name: operator_destination; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.operator_destination (id, operator_id, chain_id, address, created_at) FROM stdin;
\.


--
-- Data for Name: operator_limit; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.operator_limit (id, operator_id, chain_id, asset_code, max_payout_minor, daily_volume_minor, approval_above_minor, updated_at) FROM stdin;
\.


--
-- Data for Name: operator_secret; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.operator_secret (id, operator_id, ciphertext, created_at) FROM stdin;
sec_c10e357998fee5f5	op_previousrelease	\\x445cc27b4c58219f02caf52efb6bb208b96af1437ee2f87e9601b286d787a7758d1d374a644a7bf913942e7ec9871dd303e3493e52c8f0d5b537537a6f9c641211274884cb2935ace57ca12c2a94a54881c222e9c98b5c9342c5c2b7	2026-11-28 08:45:14.737108
\.


--
-- Data for Name: payout; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.payout (id, operator_id, payout_id, idempotency_key, instruction_hash, asset, chain_id, amount_minor, destination, status, tx_hash, reason, signed_payload_digest, created_at, updated_at, lease_until, next_attempt_at, work_attempts, fee_minor, lease_holder) FROM stdin;
\.


--
-- Data for Name: payout_approval; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.payout_approval (id, payout_id, decision, decided_by, decided_at) FROM stdin;
\.


--
-- Data for Name: payout_attempt; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.payout_attempt (id, payout_id, outcome, tx_hash, occurred_at) FROM stdin;
\.


--
-- Data for Name: payout_transition; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.payout_transition (id, payout_id, from_status, to_status, occurred_at) FROM stdin;
\.


--
-- Data for Name: projection; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.projection (name, last_event_id, built_through, holder, lease_until) FROM stdin;
\.


--
-- Data for Name: projection_gap; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.projection_gap (name, event_id, seen_at) FROM stdin;
\.


--
-- Data for Name: report_row; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.report_row (id, operator_id, report_type, asset_code, period, count, total_amount, total_fee, as_of) FROM stdin;
\.


--
-- Data for Name: scanned_block; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.scanned_block (chain_id, number, hash) FROM stdin;
\.


--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.schema_migrations (version, name, applied_at) FROM stdin;
1	0001_operators	2026-11-28T08:45:08.061893+00:00
2	0002_payouts	2026-11-28T08:45:08.098143+00:00
3	0003_pipeline	2026-11-28T08:45:08.134692+00:00
4	0004_deposits	2026-11-28T08:45:08.169104+00:00
5	0005_webhooks	2026-11-28T08:45:08.200609+00:00
6	0006_reports	2026-11-28T08:45:08.221053+00:00
7	0007_payout_index	2026-11-28T08:45:08.222180+00:00
8	0008_lease_holder_process	2026-11-28T08:45:08.228575+00:00
9	0009_projection_gaps	2026-11-28T08:45:08.230085+00:00
10	0010_payout_fencing	2026-11-28T08:45:08.235690+00:00
11	0011_fencing_cursor	2026-11-28T08:45:08.236377+00:00
12	0012_operator_ledger	2026-11-28T08:45:08.267493+00:00
13	0013_custody_fingerprint	2026-11-28T08:45:08.269078+00:00
14	0014_treasury_findings	2026-11-28T08:45:08.281075+00:00
15	0015_sweeps	2026-11-28T08:45:08.292648+00:00
\.


--
-- Data for Name: seen_signature; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.seen_signature (signature, expires_at) FROM stdin;
\.


--
-- Data for Name: signed_payload; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.signed_payload (id, broadcast_id, tx_hash, digest, raw, max_fee_per_gas, created_at) FROM stdin;
\.


--
-- Data for Name: sweep; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.sweep (id, chain_id, asset_code, deposit_address_id, address, status, amount_minor, fee_minor, topup_minor, topup_id, broadcast_id, tx_hash, reason, planned_at, created_at, updated_at) FROM stdin;
\.


--
-- Data for Name: treasury_balance; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.treasury_balance (chain_id, asset_code, role, address, on_chain_minor, expected_minor, low_balance, checked_at) FROM stdin;
\.


--
-- Data for Name: treasury_finding; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.treasury_finding (id, key, kind, critical, chain_id, asset_code, address, expected_minor, actual_minor, detail, sticky, first_seen_at, last_seen_at, acknowledged_at, acknowledged_by) FROM stdin;
\.


--
-- Data for Name: treasury_run; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.treasury_run (name, holder, lease_until, checked_at, next_run_at, last_error) FROM stdin;
\.


--
-- Data for Name: wallet; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.wallet (id, chain_id, address, next_nonce, fence_reason, verified_block, scan_block) FROM stdin;
\.


--
-- Data for Name: webhook_delivery; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.webhook_delivery (id, event_id, endpoint_id, status, attempts, next_attempt_at, lease_until, last_error, delivered_at, created_at, lease_holder) FROM stdin;
\.


--
-- Data for Name: webhook_endpoint; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.webhook_endpoint (id, endpoint_id, operator_id, url, secret, active, failing_since, disabled_at, last_error, created_at) FROM stdin;
\.


--
-- Data for Name: webhook_event; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.webhook_event (id, event_id, operator_id, event_type, payload, created_at) FROM stdin;
\.


--
-- Data for Name: webhook_subscription; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.webhook_subscription (id, subscription_id, endpoint_id, event_type, created_at) FROM stdin;
\.


--
-- Name: broadcast_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.broadcast_id_seq', 1, false);


--
-- Name: custody_account_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.custody_account_id_seq', 1, false);


--
-- Name: deposit_address_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.deposit_address_id_seq', 1, false);


--
-- Name: deposit_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.deposit_id_seq', 1, false);


--
-- Name: export_job_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.export_job_id_seq', 1, false);


--
-- Name: ledger_account_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.ledger_account_id_seq', 1, false);


--
-- Name: ledger_entry_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.ledger_entry_id_seq', 1, false);


--
-- Name: operator_destination_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.operator_destination_id_seq', 1, false);


--
-- Name: operator_limit_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.operator_limit_id_seq', 1, false);


--
-- Name: payout_approval_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.payout_approval_id_seq', 1, false);


--
-- Name: payout_attempt_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.payout_attempt_id_seq', 1, false);


--
-- Name: payout_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.payout_id_seq', 1, false);


--
-- Name: payout_transition_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.payout_transition_id_seq', 1, false);


--
-- Name: report_row_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.report_row_id_seq', 1, false);


--
-- Name: signed_payload_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.signed_payload_id_seq', 1, false);


--
-- Name: sweep_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.sweep_id_seq', 1, false);


--
-- Name: treasury_finding_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.treasury_finding_id_seq', 1, false);


--
-- Name: wallet_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.wallet_id_seq', 1, false);


--
-- Name: webhook_delivery_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.webhook_delivery_id_seq', 1, false);


--
-- Name: webhook_endpoint_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.webhook_endpoint_id_seq', 1, false);


--
-- Name: webhook_event_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.webhook_event_id_seq', 1, false);


--
-- Name: webhook_subscription_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.webhook_subscription_id_seq', 1, false);


--
-- Name: broadcast broadcast_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.broadcast
    ADD CONSTRAINT broadcast_pkey PRIMARY KEY (id);


--
-- Name: chain_cursor chain_cursor_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chain_cursor
    ADD CONSTRAINT chain_cursor_pkey PRIMARY KEY (chain_id);


--
-- Name: custody_account custody_account_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.custody_account
    ADD CONSTRAINT custody_account_pkey PRIMARY KEY (id);


--
-- Name: custody_fingerprint custody_fingerprint_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.custody_fingerprint
    ADD CONSTRAINT custody_fingerprint_pkey PRIMARY KEY (id);


--
-- Name: deposit_address deposit_address_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deposit_address
    ADD CONSTRAINT deposit_address_pkey PRIMARY KEY (id);


--
-- Name: deposit deposit_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deposit
    ADD CONSTRAINT deposit_pkey PRIMARY KEY (id);


--
-- Name: export_job export_job_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.export_job
    ADD CONSTRAINT export_job_pkey PRIMARY KEY (id);


--
-- Name: export_row export_row_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.export_row
    ADD CONSTRAINT export_row_pkey PRIMARY KEY (job_id, seq);


--
-- Name: ledger_account ledger_account_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_account
    ADD CONSTRAINT ledger_account_pkey PRIMARY KEY (id);


--
-- Name: ledger_entry ledger_entry_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_entry
    ADD CONSTRAINT ledger_entry_pkey PRIMARY KEY (id);


--
-- Name: operator_control operator_control_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operator_control
    ADD CONSTRAINT operator_control_pkey PRIMARY KEY (operator_id);


--
-- Name: operator_destination operator_destination_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operator_destination
    ADD CONSTRAINT operator_destination_pkey PRIMARY KEY (id);


--
-- Name: operator_limit operator_limit_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operator_limit
    ADD CONSTRAINT operator_limit_pkey PRIMARY KEY (id);


--
-- Name: operator operator_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operator
    ADD CONSTRAINT operator_pkey PRIMARY KEY (id);


--
-- Name: operator_secret operator_secret_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operator_secret
    ADD CONSTRAINT operator_secret_pkey PRIMARY KEY (id);


--
-- Name: payout_approval payout_approval_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payout_approval
    ADD CONSTRAINT payout_approval_pkey PRIMARY KEY (id);


--
-- Name: payout_attempt payout_attempt_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payout_attempt
    ADD CONSTRAINT payout_attempt_pkey PRIMARY KEY (id);


--
-- Name: payout payout_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payout
    ADD CONSTRAINT payout_pkey PRIMARY KEY (id);


--
-- Name: payout_transition payout_transition_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payout_transition
    ADD CONSTRAINT payout_transition_pkey PRIMARY KEY (id);


--
-- Name: projection_gap projection_gap_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.projection_gap
    ADD CONSTRAINT projection_gap_pkey PRIMARY KEY (name, event_id);


--
-- Name: projection projection_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.projection
    ADD CONSTRAINT projection_pkey PRIMARY KEY (name);


--
-- Name: report_row report_row_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.report_row
    ADD CONSTRAINT report_row_pkey PRIMARY KEY (id);


--
-- Name: scanned_block scanned_block_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.scanned_block
    ADD CONSTRAINT scanned_block_pkey PRIMARY KEY (chain_id, number);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: seen_signature seen_signature_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.seen_signature
    ADD CONSTRAINT seen_signature_pkey PRIMARY KEY (signature);


--
-- Name: signed_payload signed_payload_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.signed_payload
    ADD CONSTRAINT signed_payload_pkey PRIMARY KEY (id);


--
-- Name: sweep sweep_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sweep
    ADD CONSTRAINT sweep_pkey PRIMARY KEY (id);


--
-- Name: treasury_balance treasury_balance_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.treasury_balance
    ADD CONSTRAINT treasury_balance_pkey PRIMARY KEY (chain_id, asset_code, role, address);


--
-- Name: treasury_finding treasury_finding_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.treasury_finding
    ADD CONSTRAINT treasury_finding_pkey PRIMARY KEY (id);


--
-- Name: treasury_run treasury_run_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.treasury_run
    ADD CONSTRAINT treasury_run_pkey PRIMARY KEY (name);


--
-- Name: wallet wallet_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.wallet
    ADD CONSTRAINT wallet_pkey PRIMARY KEY (id);


--
-- Name: webhook_delivery webhook_delivery_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_delivery
    ADD CONSTRAINT webhook_delivery_pkey PRIMARY KEY (id);


--
-- Name: webhook_endpoint webhook_endpoint_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoint
    ADD CONSTRAINT webhook_endpoint_pkey PRIMARY KEY (id);


--
-- Name: webhook_event webhook_event_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_event
    ADD CONSTRAINT webhook_event_pkey PRIMARY KEY (id);


--
-- Name: webhook_subscription webhook_subscription_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_subscription
    ADD CONSTRAINT webhook_subscription_pkey PRIMARY KEY (id);


--
-- Name: broadcast_chain_id_wallet_nonce; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX broadcast_chain_id_wallet_nonce ON public.broadcast USING btree (chain_id, wallet, nonce);


--
-- Name: broadcast_payout_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX broadcast_payout_id ON public.broadcast USING btree (payout_id);


--
-- Name: broadcast_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX broadcast_status ON public.broadcast USING btree (status);


--
-- Name: custody_account_account; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX custody_account_account ON public.custody_account USING btree (account);


--
-- Name: custody_account_operator_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX custody_account_operator_id ON public.custody_account USING btree (operator_id);


--
-- Name: deposit_address_address_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX deposit_address_address_id ON public.deposit_address USING btree (address_id);


--
-- Name: deposit_address_chain_id_address; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX deposit_address_chain_id_address ON public.deposit_address USING btree (chain_id, address);


--
-- Name: deposit_address_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_address_id ON public.deposit USING btree (address_id);


--
-- Name: deposit_address_operator_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_address_operator_id ON public.deposit_address USING btree (operator_id);


--
-- Name: deposit_address_operator_id_chain_id_account_ref; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX deposit_address_operator_id_chain_id_account_ref ON public.deposit_address USING btree (operator_id, chain_id, account_ref);


--
-- Name: deposit_chain_id_status_block_height; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_chain_id_status_block_height ON public.deposit USING btree (chain_id, status, block_height);


--
-- Name: deposit_chain_id_tx_hash_output_index; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX deposit_chain_id_tx_hash_output_index ON public.deposit USING btree (chain_id, tx_hash, output_index);


--
-- Name: deposit_operator_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_operator_id ON public.deposit USING btree (operator_id);


--
-- Name: deposit_transfer_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX deposit_transfer_id ON public.deposit USING btree (transfer_id);


--
-- Name: export_job_operator_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX export_job_operator_id ON public.export_job USING btree (operator_id);


--
-- Name: export_job_operator_id_job_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX export_job_operator_id_job_id ON public.export_job USING btree (operator_id, job_id);


--
-- Name: export_job_status_next_attempt_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX export_job_status_next_attempt_at ON public.export_job USING btree (status, next_attempt_at);


--
-- Name: export_row_job_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX export_row_job_id ON public.export_row USING btree (job_id);


--
-- Name: ledger_account_operator_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ledger_account_operator_id ON public.ledger_account USING btree (operator_id);


--
-- Name: ledger_account_operator_id_chain_id_asset_code_account; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX ledger_account_operator_id_chain_id_asset_code_account ON public.ledger_account USING btree (operator_id, chain_id, asset_code, account);


--
-- Name: ledger_entry_journal; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ledger_entry_journal ON public.ledger_entry USING btree (journal);


--
-- Name: ledger_entry_operator_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ledger_entry_operator_id ON public.ledger_entry USING btree (operator_id);


--
-- Name: ledger_entry_operator_id_chain_id_asset_code_kind_created_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ledger_entry_operator_id_chain_id_asset_code_kind_created_at ON public.ledger_entry USING btree (operator_id, chain_id, asset_code, kind, created_at);


--
-- Name: ledger_entry_ref_kind; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ledger_entry_ref_kind ON public.ledger_entry USING btree (ref, kind);


--
-- Name: operator_destination_operator_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX operator_destination_operator_id ON public.operator_destination USING btree (operator_id);


--
-- Name: operator_destination_operator_id_chain_id_address; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX operator_destination_operator_id_chain_id_address ON public.operator_destination USING btree (operator_id, chain_id, address);


--
-- Name: operator_limit_operator_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX operator_limit_operator_id ON public.operator_limit USING btree (operator_id);


--
-- Name: operator_limit_operator_id_chain_id_asset_code; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX operator_limit_operator_id_chain_id_asset_code ON public.operator_limit USING btree (operator_id, chain_id, asset_code);


--
-- Name: operator_secret_operator_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX operator_secret_operator_id ON public.operator_secret USING btree (operator_id);


--
-- Name: payout_approval_payout_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX payout_approval_payout_id ON public.payout_approval USING btree (payout_id);


--
-- Name: payout_attempt_payout_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payout_attempt_payout_id ON public.payout_attempt USING btree (payout_id);


--
-- Name: payout_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payout_due ON public.payout USING btree (status, next_attempt_at);


--
-- Name: payout_operator_id_idempotency_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX payout_operator_id_idempotency_key ON public.payout USING btree (operator_id, idempotency_key);


--
-- Name: payout_operator_id_payout_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX payout_operator_id_payout_id ON public.payout USING btree (operator_id, payout_id);


--
-- Name: payout_operator_id_status_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payout_operator_id_status_id ON public.payout USING btree (operator_id, status, id);


--
-- Name: payout_transition_payout_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payout_transition_payout_id ON public.payout_transition USING btree (payout_id);


--
-- Name: report_row_operator_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX report_row_operator_id ON public.report_row USING btree (operator_id);


--
-- Name: report_row_operator_id_report_type_asset_code_period; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX report_row_operator_id_report_type_asset_code_period ON public.report_row USING btree (operator_id, report_type, asset_code, period);


--
-- Name: seen_signature_expires_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX seen_signature_expires_at ON public.seen_signature USING btree (expires_at);


--
-- Name: signed_payload_broadcast_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX signed_payload_broadcast_id ON public.signed_payload USING btree (broadcast_id);


--
-- Name: signed_payload_tx_hash; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX signed_payload_tx_hash ON public.signed_payload USING btree (tx_hash);


--
-- Name: sweep_broadcast_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX sweep_broadcast_id ON public.sweep USING btree (broadcast_id);


--
-- Name: sweep_chain_id_address_asset_code; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sweep_chain_id_address_asset_code ON public.sweep USING btree (chain_id, address, asset_code);


--
-- Name: sweep_deposit_address_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sweep_deposit_address_id ON public.sweep USING btree (deposit_address_id);


--
-- Name: sweep_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sweep_status ON public.sweep USING btree (status);


--
-- Name: sweep_topup_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX sweep_topup_id ON public.sweep USING btree (topup_id);


--
-- Name: treasury_finding_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX treasury_finding_key ON public.treasury_finding USING btree (key);


--
-- Name: wallet_chain_id_address; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX wallet_chain_id_address ON public.wallet USING btree (chain_id, address);


--
-- Name: webhook_delivery_endpoint_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_delivery_endpoint_id ON public.webhook_delivery USING btree (endpoint_id);


--
-- Name: webhook_delivery_event_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_delivery_event_id ON public.webhook_delivery USING btree (event_id);


--
-- Name: webhook_delivery_event_id_endpoint_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_delivery_event_id_endpoint_id ON public.webhook_delivery USING btree (event_id, endpoint_id);


--
-- Name: webhook_delivery_status_next_attempt_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_delivery_status_next_attempt_at ON public.webhook_delivery USING btree (status, next_attempt_at);


--
-- Name: webhook_endpoint_endpoint_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_endpoint_endpoint_id ON public.webhook_endpoint USING btree (endpoint_id);


--
-- Name: webhook_endpoint_operator_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_endpoint_operator_id ON public.webhook_endpoint USING btree (operator_id);


--
-- Name: webhook_endpoint_operator_id_url; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_endpoint_operator_id_url ON public.webhook_endpoint USING btree (operator_id, url);


--
-- Name: webhook_event_event_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_event_event_id ON public.webhook_event USING btree (event_id);


--
-- Name: webhook_event_operator_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_event_operator_id ON public.webhook_event USING btree (operator_id);


--
-- Name: webhook_subscription_endpoint_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_subscription_endpoint_id ON public.webhook_subscription USING btree (endpoint_id);


--
-- Name: webhook_subscription_endpoint_id_event_type; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_subscription_endpoint_id_event_type ON public.webhook_subscription USING btree (endpoint_id, event_type);


--
-- Name: webhook_subscription_subscription_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_subscription_subscription_id ON public.webhook_subscription USING btree (subscription_id);


--
-- Name: ledger_entry ledger_entry_no_change; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_entry_no_change BEFORE DELETE OR UPDATE ON public.ledger_entry FOR EACH ROW EXECUTE FUNCTION public.ledger_entry_append_only();


--
-- Name: payout_approval payout_approval_no_change; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payout_approval_no_change BEFORE DELETE OR UPDATE ON public.payout_approval FOR EACH ROW EXECUTE FUNCTION public.payout_approval_append_only();


--
-- Name: payout_transition payout_transition_no_change; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payout_transition_no_change BEFORE DELETE OR UPDATE ON public.payout_transition FOR EACH ROW EXECUTE FUNCTION public.payout_transition_append_only();


--
-- Name: signed_payload signed_payload_no_change; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER signed_payload_no_change BEFORE DELETE OR UPDATE ON public.signed_payload FOR EACH ROW EXECUTE FUNCTION public.signed_payload_append_only();


--
-- Name: broadcast broadcast_payout_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.broadcast
    ADD CONSTRAINT broadcast_payout_id_fkey FOREIGN KEY (payout_id) REFERENCES public.payout(id) ON DELETE RESTRICT;


--
-- Name: custody_account custody_account_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.custody_account
    ADD CONSTRAINT custody_account_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operator(id) ON DELETE RESTRICT;


--
-- Name: deposit deposit_address_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deposit
    ADD CONSTRAINT deposit_address_id_fkey FOREIGN KEY (address_id) REFERENCES public.deposit_address(id) ON DELETE RESTRICT;


--
-- Name: deposit_address deposit_address_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deposit_address
    ADD CONSTRAINT deposit_address_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operator(id) ON DELETE RESTRICT;


--
-- Name: deposit deposit_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deposit
    ADD CONSTRAINT deposit_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operator(id) ON DELETE RESTRICT;


--
-- Name: export_job export_job_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.export_job
    ADD CONSTRAINT export_job_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operator(id) ON DELETE RESTRICT;


--
-- Name: export_row export_row_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.export_row
    ADD CONSTRAINT export_row_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.export_job(id) ON DELETE CASCADE;


--
-- Name: ledger_account ledger_account_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_account
    ADD CONSTRAINT ledger_account_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operator(id) ON DELETE RESTRICT;


--
-- Name: ledger_entry ledger_entry_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_entry
    ADD CONSTRAINT ledger_entry_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operator(id) ON DELETE RESTRICT;


--
-- Name: operator_control operator_control_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operator_control
    ADD CONSTRAINT operator_control_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operator(id) ON DELETE RESTRICT;


--
-- Name: operator_destination operator_destination_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operator_destination
    ADD CONSTRAINT operator_destination_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operator(id) ON DELETE RESTRICT;


--
-- Name: operator_limit operator_limit_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operator_limit
    ADD CONSTRAINT operator_limit_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operator(id) ON DELETE RESTRICT;


--
-- Name: operator_secret operator_secret_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operator_secret
    ADD CONSTRAINT operator_secret_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operator(id) ON DELETE CASCADE;


--
-- Name: payout_approval payout_approval_payout_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payout_approval
    ADD CONSTRAINT payout_approval_payout_id_fkey FOREIGN KEY (payout_id) REFERENCES public.payout(id) ON DELETE RESTRICT;


--
-- Name: payout_attempt payout_attempt_payout_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payout_attempt
    ADD CONSTRAINT payout_attempt_payout_id_fkey FOREIGN KEY (payout_id) REFERENCES public.payout(id) ON DELETE RESTRICT;


--
-- Name: payout payout_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payout
    ADD CONSTRAINT payout_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operator(id) ON DELETE RESTRICT;


--
-- Name: payout_transition payout_transition_payout_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payout_transition
    ADD CONSTRAINT payout_transition_payout_id_fkey FOREIGN KEY (payout_id) REFERENCES public.payout(id) ON DELETE RESTRICT;


--
-- Name: report_row report_row_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.report_row
    ADD CONSTRAINT report_row_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operator(id) ON DELETE RESTRICT;


--
-- Name: signed_payload signed_payload_broadcast_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.signed_payload
    ADD CONSTRAINT signed_payload_broadcast_id_fkey FOREIGN KEY (broadcast_id) REFERENCES public.broadcast(id) ON DELETE RESTRICT;


--
-- Name: sweep sweep_broadcast_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sweep
    ADD CONSTRAINT sweep_broadcast_id_fkey FOREIGN KEY (broadcast_id) REFERENCES public.broadcast(id) ON DELETE RESTRICT;


--
-- Name: sweep sweep_deposit_address_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sweep
    ADD CONSTRAINT sweep_deposit_address_id_fkey FOREIGN KEY (deposit_address_id) REFERENCES public.deposit_address(id) ON DELETE RESTRICT;


--
-- Name: sweep sweep_topup_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sweep
    ADD CONSTRAINT sweep_topup_id_fkey FOREIGN KEY (topup_id) REFERENCES public.broadcast(id) ON DELETE RESTRICT;


--
-- Name: webhook_delivery webhook_delivery_endpoint_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_delivery
    ADD CONSTRAINT webhook_delivery_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoint(id) ON DELETE RESTRICT;


--
-- Name: webhook_delivery webhook_delivery_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_delivery
    ADD CONSTRAINT webhook_delivery_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.webhook_event(id) ON DELETE RESTRICT;


--
-- Name: webhook_endpoint webhook_endpoint_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoint
    ADD CONSTRAINT webhook_endpoint_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operator(id) ON DELETE RESTRICT;


--
-- Name: webhook_event webhook_event_operator_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_event
    ADD CONSTRAINT webhook_event_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES public.operator(id) ON DELETE RESTRICT;


--
-- Name: webhook_subscription webhook_subscription_endpoint_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_subscription
    ADD CONSTRAINT webhook_subscription_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoint(id) ON DELETE RESTRICT;


--
-- PostgreSQL database dump complete
--

\unrestrict DpG7GaWVjcXxObjiLKTRZLWTKN2IEkWn26KZ7bcMciSNLugjaQFffFGRcleV9vt

