--
-- PostgreSQL database dump
--

\restrict stzo3dVH6G0MJNctewDGGIcCyEaf44daP0GM5G0uZ1JuaxbLQkwiuSV95KOGDWs

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
-- Name: order_event_append_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.order_event_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'order_event is append-only'; END; $$;


--
-- Name: order_next_revision(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.order_next_revision() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN NEW.revision := OLD.revision + 1; RETURN NEW; END; $$;


--
-- Name: realtime_event_append_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.realtime_event_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'realtime_event is append-only'; END; $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: assignment; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.assignment (
    id integer NOT NULL,
    order_id integer NOT NULL,
    courier_id integer NOT NULL,
    sequence integer,
    status character varying(16) NOT NULL,
    created_at timestamp without time zone NOT NULL,
    cancelled_at timestamp without time zone
);


--
-- Name: assignment_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.assignment_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: assignment_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.assignment_id_seq OWNED BY public.assignment.id;


--
-- Name: auth_session; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_session (
    id character varying(64) NOT NULL,
    user_id integer NOT NULL,
    company_id integer NOT NULL,
    created_at timestamp without time zone NOT NULL,
    revoked_at timestamp without time zone,
    revoked_reason character varying(40)
);


--
-- Name: collection; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.collection (
    id integer NOT NULL,
    company_id integer NOT NULL,
    courier_id integer NOT NULL,
    order_id integer NOT NULL,
    amount_amd bigint NOT NULL,
    collected_at timestamp without time zone NOT NULL,
    settlement_id integer
);


--
-- Name: collection_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.collection_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: collection_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.collection_id_seq OWNED BY public.collection.id;


--
-- Name: company; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.company (
    id integer NOT NULL,
    name character varying(120) NOT NULL,
    city character varying(120) NOT NULL,
    phone character varying(40),
    plan character varying(16) NOT NULL,
    trial_ends_at timestamp without time zone,
    brand_color character varying(7) NOT NULL,
    logo_url character varying(2000),
    logo_key character varying(500),
    sms_sender character varying(11),
    sms_template character varying(480),
    support_phone character varying(40),
    show_courier_phone boolean NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: company_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.company_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: company_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.company_id_seq OWNED BY public.company.id;


--
-- Name: company_webhook; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.company_webhook (
    id integer NOT NULL,
    company_id integer NOT NULL,
    url character varying(2048) NOT NULL,
    events text NOT NULL,
    secret_cipher bytea NOT NULL,
    created_at timestamp without time zone NOT NULL,
    deleted_at timestamp without time zone,
    failing_since timestamp without time zone,
    last_error character varying(500)
);


--
-- Name: company_webhook_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.company_webhook_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: company_webhook_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.company_webhook_id_seq OWNED BY public.company_webhook.id;


--
-- Name: courier; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.courier (
    id integer NOT NULL,
    company_id integer NOT NULL,
    user_id integer,
    display_name character varying(200) NOT NULL,
    phone character varying(40),
    vehicle_label character varying(120),
    photo_url character varying(2000),
    preferred_language character varying(2) NOT NULL,
    onboarding_completed boolean NOT NULL,
    active boolean NOT NULL,
    online boolean NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: courier_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.courier_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: courier_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.courier_id_seq OWNED BY public.courier.id;


--
-- Name: courier_location; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.courier_location (
    id integer NOT NULL,
    courier_id integer NOT NULL,
    lat double precision NOT NULL,
    lon double precision NOT NULL,
    captured_at timestamp without time zone NOT NULL,
    accuracy_m integer,
    source character varying(40),
    received_at timestamp without time zone NOT NULL
);


--
-- Name: courier_location_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.courier_location_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: courier_location_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.courier_location_id_seq OWNED BY public.courier_location.id;


--
-- Name: depot; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.depot (
    id integer NOT NULL,
    company_id integer NOT NULL,
    name character varying(200) NOT NULL,
    address character varying(500) NOT NULL,
    lat double precision NOT NULL,
    lon double precision NOT NULL,
    is_default boolean NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: depot_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.depot_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: depot_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.depot_id_seq OWNED BY public.depot.id;


--
-- Name: integration_key; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.integration_key (
    id integer NOT NULL,
    company_id integer NOT NULL,
    name character varying(200) NOT NULL,
    key_hash character varying(64) NOT NULL,
    created_by_id integer,
    created_at timestamp without time zone NOT NULL,
    revoked_at timestamp without time zone
);


--
-- Name: integration_key_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.integration_key_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: integration_key_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.integration_key_id_seq OWNED BY public.integration_key.id;


--
-- Name: job_lease; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.job_lease (
    name character varying(32) NOT NULL,
    holder character varying(200),
    lease_until timestamp without time zone,
    last_run_at timestamp without time zone
);


--
-- Name: link_token; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.link_token (
    id integer NOT NULL,
    kind character varying(16) NOT NULL,
    token_hash character varying(64) NOT NULL,
    company_id integer,
    user_id integer,
    role character varying(16),
    name character varying(200),
    email character varying(320),
    phone character varying(40),
    vehicle character varying(120),
    invited_by_id integer,
    created_at timestamp without time zone NOT NULL,
    expires_at timestamp without time zone NOT NULL,
    used_at timestamp without time zone,
    revoked_at timestamp without time zone,
    courier_id integer
);


--
-- Name: link_token_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.link_token_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: link_token_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.link_token_id_seq OWNED BY public.link_token.id;


--
-- Name: membership; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.membership (
    id integer NOT NULL,
    user_id integer NOT NULL,
    company_id integer NOT NULL,
    role character varying(16) NOT NULL,
    status character varying(16) NOT NULL,
    session_epoch integer NOT NULL,
    vehicle character varying(120),
    joined_at timestamp without time zone NOT NULL
);


--
-- Name: membership_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.membership_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: membership_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.membership_id_seq OWNED BY public.membership.id;


--
-- Name: order; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public."order" (
    id integer NOT NULL,
    company_id integer NOT NULL,
    public_id character varying(16) NOT NULL,
    status character varying(16) NOT NULL,
    recipient_name character varying(200) NOT NULL,
    recipient_phone character varying(40) NOT NULL,
    amount_amd bigint NOT NULL,
    otp_required boolean NOT NULL,
    otp_hash character varying(64),
    otp_cipher bytea,
    otp_attempts integer NOT NULL,
    is_cod boolean NOT NULL,
    cod_amount_amd bigint NOT NULL,
    weight_kg double precision,
    window_start timestamp without time zone,
    window_end timestamp without time zone,
    address_hy character varying(500) NOT NULL,
    address_en character varying(500),
    address_ru character varying(500),
    lat double precision NOT NULL,
    lon double precision NOT NULL,
    courier_id integer,
    sequence integer,
    attempt integer NOT NULL,
    failure_reason character varying(32),
    proof_recipient_name character varying(200),
    proof_photo_key character varying(500),
    proof_notes character varying(1000),
    proof_method character varying(8),
    collected_amount_amd bigint,
    last_courier_id integer,
    created_at timestamp without time zone NOT NULL,
    updated_at timestamp without time zone NOT NULL,
    finished_at timestamp without time zone,
    revision integer DEFAULT 0 NOT NULL,
    external_ref character varying(100),
    address_entrance character varying(40),
    address_floor character varying(40),
    address_apartment character varying(40),
    address_intercom character varying(40),
    note_to_courier character varying(500),
    attention_reason character varying(500),
    attention_move character varying(16),
    attention_held_amd bigint,
    attention_at timestamp without time zone,
    recipient_language character varying(2),
    recipient_email character varying(320)
);


--
-- Name: order_event; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.order_event (
    id integer NOT NULL,
    order_id integer NOT NULL,
    company_id integer NOT NULL,
    kind character varying(32) NOT NULL,
    from_status character varying(16),
    to_status character varying(16),
    actor_id integer,
    data text NOT NULL,
    created_at timestamp without time zone NOT NULL,
    courier_id integer
);


--
-- Name: order_event_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.order_event_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: order_event_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.order_event_id_seq OWNED BY public.order_event.id;


--
-- Name: order_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.order_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: order_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.order_id_seq OWNED BY public."order".id;


--
-- Name: order_webhook_delivery; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.order_webhook_delivery (
    id integer NOT NULL,
    message_id integer NOT NULL,
    endpoint_id integer NOT NULL,
    status character varying(16) NOT NULL,
    attempts integer NOT NULL,
    next_attempt_at timestamp without time zone,
    lease_until timestamp without time zone,
    lease_holder character varying(200),
    last_error character varying(500),
    delivered_at timestamp without time zone,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: order_webhook_delivery_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.order_webhook_delivery_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: order_webhook_delivery_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.order_webhook_delivery_id_seq OWNED BY public.order_webhook_delivery.id;


--
-- Name: outgoing_mail; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.outgoing_mail (
    id integer NOT NULL,
    to_address character varying(320) NOT NULL,
    subject character varying(300) NOT NULL,
    body text NOT NULL,
    status character varying(16) NOT NULL,
    attempts integer NOT NULL,
    next_attempt_at timestamp without time zone NOT NULL,
    lease_until timestamp without time zone,
    last_error character varying(500),
    created_at timestamp without time zone NOT NULL,
    sent_at timestamp without time zone,
    lease_holder character varying(200)
);


--
-- Name: outgoing_mail_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.outgoing_mail_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: outgoing_mail_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.outgoing_mail_id_seq OWNED BY public.outgoing_mail.id;


--
-- Name: rating; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rating (
    id integer NOT NULL,
    order_id integer NOT NULL,
    company_id integer NOT NULL,
    ok boolean NOT NULL,
    comment character varying(1000),
    created_at timestamp without time zone NOT NULL
);


--
-- Name: rating_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.rating_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: rating_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.rating_id_seq OWNED BY public.rating.id;


--
-- Name: realtime_event; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.realtime_event (
    id integer NOT NULL,
    company_id integer NOT NULL,
    kind character varying(48) NOT NULL,
    payload text NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: realtime_event_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.realtime_event_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: realtime_event_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.realtime_event_id_seq OWNED BY public.realtime_event.id;


--
-- Name: recipient_link; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.recipient_link (
    order_id integer NOT NULL,
    link_id integer NOT NULL,
    token_cipher bytea NOT NULL
);


--
-- Name: recipient_message; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.recipient_message (
    id integer NOT NULL,
    company_id integer NOT NULL,
    order_id integer NOT NULL,
    attempt integer NOT NULL,
    event character varying(16) NOT NULL,
    channel character varying(8) NOT NULL,
    to_address character varying(320) NOT NULL,
    language character varying(2) NOT NULL,
    data text NOT NULL,
    dedupe_key character varying(80),
    body text,
    segments integer,
    status character varying(16) NOT NULL,
    attempts integer NOT NULL,
    next_attempt_at timestamp without time zone,
    lease_until timestamp without time zone,
    lease_holder character varying(200),
    last_error character varying(500),
    provider_message_id character varying(65),
    created_at timestamp without time zone NOT NULL,
    sent_at timestamp without time zone,
    receipt_at timestamp without time zone
);


--
-- Name: recipient_message_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.recipient_message_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: recipient_message_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.recipient_message_id_seq OWNED BY public.recipient_message.id;


--
-- Name: recipient_settings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.recipient_settings (
    company_id integer NOT NULL,
    default_language character varying(2) NOT NULL,
    events text NOT NULL,
    templates text NOT NULL,
    sms_enabled boolean NOT NULL,
    email_enabled boolean NOT NULL,
    smpp_host character varying(255),
    smpp_port integer,
    smpp_system_id character varying(16),
    smpp_password_cipher bytea,
    smpp_source_addr character varying(21),
    smpp_tls boolean NOT NULL,
    smpp_per_second integer NOT NULL,
    arriving_minutes integer NOT NULL,
    updated_at timestamp without time zone
);


--
-- Name: refresh_token; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.refresh_token (
    id integer NOT NULL,
    session_id character varying(64) NOT NULL,
    token_hash character varying(64) NOT NULL,
    issued_at timestamp without time zone NOT NULL,
    expires_at timestamp without time zone NOT NULL,
    rotated_at timestamp without time zone
);


--
-- Name: refresh_token_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.refresh_token_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: refresh_token_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.refresh_token_id_seq OWNED BY public.refresh_token.id;


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    name character varying(200) NOT NULL,
    applied_at character varying(40) NOT NULL
);


--
-- Name: settlement; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.settlement (
    id integer NOT NULL,
    company_id integer NOT NULL,
    courier_id integer NOT NULL,
    status character varying(16) NOT NULL,
    expected_amd bigint NOT NULL,
    received_amd bigint,
    shortfall_amd bigint,
    note character varying(1000),
    submitted_at timestamp without time zone NOT NULL,
    confirmed_at timestamp without time zone,
    accepted_by_id integer,
    awaiting integer
);


--
-- Name: settlement_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.settlement_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: settlement_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.settlement_id_seq OWNED BY public.settlement.id;


--
-- Name: shift; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.shift (
    id integer NOT NULL,
    courier_id integer NOT NULL,
    started_at timestamp without time zone NOT NULL,
    ended_at timestamp without time zone,
    on_break boolean NOT NULL,
    ended_by_id integer,
    open_flag integer
);


--
-- Name: shift_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.shift_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: shift_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.shift_id_seq OWNED BY public.shift.id;


--
-- Name: status_request; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.status_request (
    id integer NOT NULL,
    courier_id integer NOT NULL,
    key character varying(128) NOT NULL,
    request_hash character varying(64) NOT NULL,
    response text NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: status_request_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.status_request_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: status_request_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.status_request_id_seq OWNED BY public.status_request.id;


--
-- Name: tracking_link; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tracking_link (
    id integer NOT NULL,
    company_id integer NOT NULL,
    order_id integer NOT NULL,
    token_hash character varying(64) NOT NULL,
    created_at timestamp without time zone NOT NULL,
    expires_at timestamp without time zone NOT NULL,
    revoked_at timestamp without time zone,
    token_cipher bytea
);


--
-- Name: tracking_link_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.tracking_link_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: tracking_link_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.tracking_link_id_seq OWNED BY public.tracking_link.id;


--
-- Name: user; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public."user" (
    id integer NOT NULL,
    email character varying(320),
    phone character varying(40),
    display_name character varying(200) NOT NULL,
    password_hash character varying(200),
    email_confirmed boolean NOT NULL,
    last_company_id integer,
    created_at timestamp without time zone NOT NULL,
    language character varying(2) DEFAULT 'hy'::character varying NOT NULL
);


--
-- Name: user_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.user_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: user_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.user_id_seq OWNED BY public."user".id;


--
-- Name: webhook_message; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_message (
    id integer NOT NULL,
    message_id character varying(40) NOT NULL,
    company_id integer NOT NULL,
    event_type character varying(32) NOT NULL,
    payload text NOT NULL,
    created_at timestamp without time zone NOT NULL
);


--
-- Name: webhook_message_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.webhook_message_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: webhook_message_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.webhook_message_id_seq OWNED BY public.webhook_message.id;


--
-- Name: assignment id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.assignment ALTER COLUMN id SET DEFAULT nextval('public.assignment_id_seq'::regclass);


--
-- Name: collection id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collection ALTER COLUMN id SET DEFAULT nextval('public.collection_id_seq'::regclass);


--
-- Name: company id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.company ALTER COLUMN id SET DEFAULT nextval('public.company_id_seq'::regclass);


--
-- Name: company_webhook id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.company_webhook ALTER COLUMN id SET DEFAULT nextval('public.company_webhook_id_seq'::regclass);


--
-- Name: courier id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.courier ALTER COLUMN id SET DEFAULT nextval('public.courier_id_seq'::regclass);


--
-- Name: courier_location id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.courier_location ALTER COLUMN id SET DEFAULT nextval('public.courier_location_id_seq'::regclass);


--
-- Name: depot id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.depot ALTER COLUMN id SET DEFAULT nextval('public.depot_id_seq'::regclass);


--
-- Name: integration_key id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.integration_key ALTER COLUMN id SET DEFAULT nextval('public.integration_key_id_seq'::regclass);


--
-- Name: link_token id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.link_token ALTER COLUMN id SET DEFAULT nextval('public.link_token_id_seq'::regclass);


--
-- Name: membership id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.membership ALTER COLUMN id SET DEFAULT nextval('public.membership_id_seq'::regclass);


--
-- Name: order id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."order" ALTER COLUMN id SET DEFAULT nextval('public.order_id_seq'::regclass);


--
-- Name: order_event id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.order_event ALTER COLUMN id SET DEFAULT nextval('public.order_event_id_seq'::regclass);


--
-- Name: order_webhook_delivery id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.order_webhook_delivery ALTER COLUMN id SET DEFAULT nextval('public.order_webhook_delivery_id_seq'::regclass);


--
-- Name: outgoing_mail id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outgoing_mail ALTER COLUMN id SET DEFAULT nextval('public.outgoing_mail_id_seq'::regclass);


--
-- Name: rating id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rating ALTER COLUMN id SET DEFAULT nextval('public.rating_id_seq'::regclass);


--
-- Name: realtime_event id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.realtime_event ALTER COLUMN id SET DEFAULT nextval('public.realtime_event_id_seq'::regclass);


--
-- Name: recipient_message id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recipient_message ALTER COLUMN id SET DEFAULT nextval('public.recipient_message_id_seq'::regclass);


--
-- Name: refresh_token id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.refresh_token ALTER COLUMN id SET DEFAULT nextval('public.refresh_token_id_seq'::regclass);


--
-- Name: settlement id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.settlement ALTER COLUMN id SET DEFAULT nextval('public.settlement_id_seq'::regclass);


--
-- Name: shift id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shift ALTER COLUMN id SET DEFAULT nextval('public.shift_id_seq'::regclass);


--
-- Name: status_request id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.status_request ALTER COLUMN id SET DEFAULT nextval('public.status_request_id_seq'::regclass);


--
-- Name: tracking_link id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tracking_link ALTER COLUMN id SET DEFAULT nextval('public.tracking_link_id_seq'::regclass);


--
-- Name: user id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."user" ALTER COLUMN id SET DEFAULT nextval('public.user_id_seq'::regclass);


--
-- Name: webhook_message id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_message ALTER COLUMN id SET DEFAULT nextval('public.webhook_message_id_seq'::regclass);


--
-- Data for Name: assignment; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.assignment (id, order_id, courier_id, sequence, status, created_at, cancelled_at) FROM stdin;
\.


--
-- Data for Name: auth_session; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.auth_session (id, user_id, company_id, created_at, revoked_at, revoked_reason) FROM stdin;
\.


--
-- Data for Name: collection; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.collection (id, company_id, courier_id, order_id, amount_amd, collected_at, settlement_id) FROM stdin;
\.


--
-- Data for Name: company; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.company (id, name, city, phone, plan, trial_ends_at, brand_color, logo_url, logo_key, sms_sender, sms_template, support_phone, show_courier_phone, created_at) FROM stdin;
1	Arev Express	Yerevan	\N	start	2026-12-12 08:45:11.824755	#1F6FEB	\N	\N	\N	\N	\N	f	2026-11-28 08:45:11.824755
\.


--
-- Data for Name: company_webhook; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.company_webhook (id, company_id, url, events, secret_cipher, created_at, deleted_at, failing_since, last_error) FROM stdin;
\.


--
-- Data for Name: courier; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.courier (id, company_id, user_id, display_name, phone, vehicle_label, photo_url, preferred_language, onboarding_completed, active, online, created_at) FROM stdin;
\.


--
-- Data for Name: courier_location; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.courier_location (id, courier_id, lat, lon, captured_at, accuracy_m, source, received_at) FROM stdin;
\.


--
-- Data for Name: depot; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.depot (id, company_id, name, address, lat, lon, is_default, created_at) FROM stdin;
1	1	Main	Abovyan 1	40.18	44.51	t	2026-11-28 08:45:11.824755
\.


--
-- Data for Name: integration_key; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.integration_key (id, company_id, name, key_hash, created_by_id, created_at, revoked_at) FROM stdin;
\.


--
-- Data for Name: job_lease; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.job_lease (name, holder, lease_until, last_run_at) FROM stdin;
\.


--
-- Data for Name: link_token; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.link_token (id, kind, token_hash, company_id, user_id, role, name, email, phone, vehicle, invited_by_id, created_at, expires_at, used_at, revoked_at, courier_id) FROM stdin;
\.


--
-- Data for Name: membership; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.membership (id, user_id, company_id, role, status, session_epoch, vehicle, joined_at) FROM stdin;
1	1	1	owner	active	0	\N	2026-11-28 08:45:11.824755
\.


--
-- Data for Name: order; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public."order" (id, company_id, public_id, status, recipient_name, recipient_phone, amount_amd, otp_required, otp_hash, otp_cipher, otp_attempts, is_cod, cod_amount_amd, weight_kg, window_start, window_end, address_hy, address_en, address_ru, lat, lon, courier_id, sequence, attempt, failure_reason, proof_recipient_name, proof_photo_key, proof_notes, proof_method, collected_amount_amd, last_courier_id, created_at, updated_at, finished_at, revision, external_ref, address_entrance, address_floor, address_apartment, address_intercom, note_to_courier, attention_reason, attention_move, attention_held_amd, attention_at, recipient_language, recipient_email) FROM stdin;
\.


--
-- Data for Name: order_event; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.order_event (id, order_id, company_id, kind, from_status, to_status, actor_id, data, created_at, courier_id) FROM stdin;
\.


--
-- Data for Name: order_webhook_delivery; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.order_webhook_delivery (id, message_id, endpoint_id, status, attempts, next_attempt_at, lease_until, lease_holder, last_error, delivered_at, created_at) FROM stdin;
\.


--
-- Data for Name: outgoing_mail; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.outgoing_mail (id, to_address, subject, body, status, attempts, next_attempt_at, lease_until, last_error, created_at, sent_at, lease_holder) FROM stdin;
\.


--
-- Data for Name: rating; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.rating (id, order_id, company_id, ok, comment, created_at) FROM stdin;
\.


--
-- Data for Name: realtime_event; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.realtime_event (id, company_id, kind, payload, created_at) FROM stdin;
\.


--
-- Data for Name: recipient_link; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.recipient_link (order_id, link_id, token_cipher) FROM stdin;
\.


--
-- Data for Name: recipient_message; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.recipient_message (id, company_id, order_id, attempt, event, channel, to_address, language, data, dedupe_key, body, segments, status, attempts, next_attempt_at, lease_until, lease_holder, last_error, provider_message_id, created_at, sent_at, receipt_at) FROM stdin;
\.


--
-- Data for Name: recipient_settings; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.recipient_settings (company_id, default_language, events, templates, sms_enabled, email_enabled, smpp_host, smpp_port, smpp_system_id, smpp_password_cipher, smpp_source_addr, smpp_tls, smpp_per_second, arriving_minutes, updated_at) FROM stdin;
\.


--
-- Data for Name: refresh_token; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.refresh_token (id, session_id, token_hash, issued_at, expires_at, rotated_at) FROM stdin;
\.


--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.schema_migrations (version, name, applied_at) FROM stdin;
1	0001_identity	2026-11-28T08:45:07.782594+00:00
2	0002_links	2026-11-28T08:45:07.804235+00:00
3	0003_orders	2026-11-28T08:45:07.883092+00:00
4	0004_tracking	2026-11-28T08:45:07.910366+00:00
5	0005_event_courier	2026-11-28T08:45:07.912556+00:00
6	0006_job_lease	2026-11-28T08:45:07.917038+00:00
7	0007_prunable_events	2026-11-28T08:45:07.920190+00:00
8	0008_user_language	2026-11-28T08:45:07.920791+00:00
9	0009_order_revision	2026-11-28T08:45:07.923843+00:00
10	0010_lease_holder_process	2026-11-28T08:45:07.926268+00:00
11	0011_courier_account_invite	2026-11-28T08:45:07.927457+00:00
12	0012_order_details	2026-11-28T08:45:07.929009+00:00
13	0013_mail_link_placeholders	2026-11-28T08:45:07.931755+00:00
14	0014_integrations	2026-11-28T08:45:07.952317+00:00
15	0015_field_actions	2026-11-28T08:45:07.953704+00:00
16	0016_recipient_messages	2026-11-28T08:45:07.975260+00:00
\.


--
-- Data for Name: settlement; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.settlement (id, company_id, courier_id, status, expected_amd, received_amd, shortfall_amd, note, submitted_at, confirmed_at, accepted_by_id, awaiting) FROM stdin;
\.


--
-- Data for Name: shift; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.shift (id, courier_id, started_at, ended_at, on_break, ended_by_id, open_flag) FROM stdin;
\.


--
-- Data for Name: status_request; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.status_request (id, courier_id, key, request_hash, response, created_at) FROM stdin;
\.


--
-- Data for Name: tracking_link; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.tracking_link (id, company_id, order_id, token_hash, created_at, expires_at, revoked_at, token_cipher) FROM stdin;
\.


--
-- Data for Name: user; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public."user" (id, email, phone, display_name, password_hash, email_confirmed, last_company_id, created_at, language) FROM stdin;
1	owner@arev.am	\N	Ani	$argon2id$v=19$m=65536,t=3,p=4$W5xJ4RPT3mloObNO83/cMA$Ew7uBNChGyi4+5IWfNjQTqXgLFjLcIWjzFGlE8ssqh0	t	1	2026-11-28 08:45:11.824755	hy
\.


--
-- Data for Name: webhook_message; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.webhook_message (id, message_id, company_id, event_type, payload, created_at) FROM stdin;
\.


--
-- Name: assignment_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.assignment_id_seq', 1, false);


--
-- Name: collection_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.collection_id_seq', 1, false);


--
-- Name: company_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.company_id_seq', 1, true);


--
-- Name: company_webhook_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.company_webhook_id_seq', 1, false);


--
-- Name: courier_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.courier_id_seq', 1, false);


--
-- Name: courier_location_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.courier_location_id_seq', 1, false);


--
-- Name: depot_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.depot_id_seq', 1, true);


--
-- Name: integration_key_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.integration_key_id_seq', 1, false);


--
-- Name: link_token_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.link_token_id_seq', 1, false);


--
-- Name: membership_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.membership_id_seq', 1, true);


--
-- Name: order_event_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.order_event_id_seq', 1, false);


--
-- Name: order_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.order_id_seq', 1, false);


--
-- Name: order_webhook_delivery_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.order_webhook_delivery_id_seq', 1, false);


--
-- Name: outgoing_mail_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.outgoing_mail_id_seq', 1, false);


--
-- Name: rating_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.rating_id_seq', 1, false);


--
-- Name: realtime_event_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.realtime_event_id_seq', 1, false);


--
-- Name: recipient_message_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.recipient_message_id_seq', 1, false);


--
-- Name: refresh_token_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.refresh_token_id_seq', 1, false);


--
-- Name: settlement_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.settlement_id_seq', 1, false);


--
-- Name: shift_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.shift_id_seq', 1, false);


--
-- Name: status_request_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.status_request_id_seq', 1, false);


--
-- Name: tracking_link_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.tracking_link_id_seq', 1, false);


--
-- Name: user_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.user_id_seq', 1, true);


--
-- Name: webhook_message_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.webhook_message_id_seq', 1, false);


--
-- Name: assignment assignment_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.assignment
    ADD CONSTRAINT assignment_pkey PRIMARY KEY (id);


--
-- Name: auth_session auth_session_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_session
    ADD CONSTRAINT auth_session_pkey PRIMARY KEY (id);


--
-- Name: collection collection_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collection
    ADD CONSTRAINT collection_pkey PRIMARY KEY (id);


--
-- Name: company company_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.company
    ADD CONSTRAINT company_pkey PRIMARY KEY (id);


--
-- Name: company_webhook company_webhook_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.company_webhook
    ADD CONSTRAINT company_webhook_pkey PRIMARY KEY (id);


--
-- Name: courier_location courier_location_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.courier_location
    ADD CONSTRAINT courier_location_pkey PRIMARY KEY (id);


--
-- Name: courier courier_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.courier
    ADD CONSTRAINT courier_pkey PRIMARY KEY (id);


--
-- Name: depot depot_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.depot
    ADD CONSTRAINT depot_pkey PRIMARY KEY (id);


--
-- Name: integration_key integration_key_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.integration_key
    ADD CONSTRAINT integration_key_pkey PRIMARY KEY (id);


--
-- Name: job_lease job_lease_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.job_lease
    ADD CONSTRAINT job_lease_pkey PRIMARY KEY (name);


--
-- Name: link_token link_token_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.link_token
    ADD CONSTRAINT link_token_pkey PRIMARY KEY (id);


--
-- Name: membership membership_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.membership
    ADD CONSTRAINT membership_pkey PRIMARY KEY (id);


--
-- Name: order_event order_event_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.order_event
    ADD CONSTRAINT order_event_pkey PRIMARY KEY (id);


--
-- Name: order order_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."order"
    ADD CONSTRAINT order_pkey PRIMARY KEY (id);


--
-- Name: order_webhook_delivery order_webhook_delivery_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.order_webhook_delivery
    ADD CONSTRAINT order_webhook_delivery_pkey PRIMARY KEY (id);


--
-- Name: outgoing_mail outgoing_mail_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outgoing_mail
    ADD CONSTRAINT outgoing_mail_pkey PRIMARY KEY (id);


--
-- Name: rating rating_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rating
    ADD CONSTRAINT rating_pkey PRIMARY KEY (id);


--
-- Name: realtime_event realtime_event_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.realtime_event
    ADD CONSTRAINT realtime_event_pkey PRIMARY KEY (id);


--
-- Name: recipient_link recipient_link_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recipient_link
    ADD CONSTRAINT recipient_link_pkey PRIMARY KEY (order_id);


--
-- Name: recipient_message recipient_message_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recipient_message
    ADD CONSTRAINT recipient_message_pkey PRIMARY KEY (id);


--
-- Name: recipient_settings recipient_settings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recipient_settings
    ADD CONSTRAINT recipient_settings_pkey PRIMARY KEY (company_id);


--
-- Name: refresh_token refresh_token_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.refresh_token
    ADD CONSTRAINT refresh_token_pkey PRIMARY KEY (id);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: settlement settlement_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.settlement
    ADD CONSTRAINT settlement_pkey PRIMARY KEY (id);


--
-- Name: shift shift_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shift
    ADD CONSTRAINT shift_pkey PRIMARY KEY (id);


--
-- Name: status_request status_request_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.status_request
    ADD CONSTRAINT status_request_pkey PRIMARY KEY (id);


--
-- Name: tracking_link tracking_link_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tracking_link
    ADD CONSTRAINT tracking_link_pkey PRIMARY KEY (id);


--
-- Name: user user_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."user"
    ADD CONSTRAINT user_pkey PRIMARY KEY (id);


--
-- Name: webhook_message webhook_message_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_message
    ADD CONSTRAINT webhook_message_pkey PRIMARY KEY (id);


--
-- Name: assignment_courier_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX assignment_courier_id ON public.assignment USING btree (courier_id);


--
-- Name: assignment_courier_id_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX assignment_courier_id_status ON public.assignment USING btree (courier_id, status);


--
-- Name: assignment_order_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX assignment_order_id ON public.assignment USING btree (order_id);


--
-- Name: assignment_order_id_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX assignment_order_id_status ON public.assignment USING btree (order_id, status);


--
-- Name: auth_session_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_session_company_id ON public.auth_session USING btree (company_id);


--
-- Name: auth_session_user_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_session_user_id ON public.auth_session USING btree (user_id);


--
-- Name: collection_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX collection_company_id ON public.collection USING btree (company_id);


--
-- Name: collection_courier_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX collection_courier_id ON public.collection USING btree (courier_id);


--
-- Name: collection_courier_id_settlement_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX collection_courier_id_settlement_id ON public.collection USING btree (courier_id, settlement_id);


--
-- Name: collection_order_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX collection_order_id ON public.collection USING btree (order_id);


--
-- Name: collection_settlement_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX collection_settlement_id ON public.collection USING btree (settlement_id);


--
-- Name: company_webhook_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX company_webhook_company_id ON public.company_webhook USING btree (company_id);


--
-- Name: courier_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX courier_company_id ON public.courier USING btree (company_id);


--
-- Name: courier_company_id_user_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX courier_company_id_user_id ON public.courier USING btree (company_id, user_id);


--
-- Name: courier_location_courier_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX courier_location_courier_id ON public.courier_location USING btree (courier_id);


--
-- Name: courier_location_courier_id_captured_at; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX courier_location_courier_id_captured_at ON public.courier_location USING btree (courier_id, captured_at);


--
-- Name: courier_user_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX courier_user_id ON public.courier USING btree (user_id);


--
-- Name: depot_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX depot_company_id ON public.depot USING btree (company_id);


--
-- Name: integration_key_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX integration_key_company_id ON public.integration_key USING btree (company_id);


--
-- Name: integration_key_created_by_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX integration_key_created_by_id ON public.integration_key USING btree (created_by_id);


--
-- Name: integration_key_key_hash; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX integration_key_key_hash ON public.integration_key USING btree (key_hash);


--
-- Name: link_token_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX link_token_company_id ON public.link_token USING btree (company_id);


--
-- Name: link_token_company_id_kind; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX link_token_company_id_kind ON public.link_token USING btree (company_id, kind);


--
-- Name: link_token_courier_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX link_token_courier_id ON public.link_token USING btree (courier_id);


--
-- Name: link_token_invited_by_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX link_token_invited_by_id ON public.link_token USING btree (invited_by_id);


--
-- Name: link_token_token_hash; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX link_token_token_hash ON public.link_token USING btree (token_hash);


--
-- Name: link_token_user_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX link_token_user_id ON public.link_token USING btree (user_id);


--
-- Name: membership_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX membership_company_id ON public.membership USING btree (company_id);


--
-- Name: membership_user_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX membership_user_id ON public.membership USING btree (user_id);


--
-- Name: membership_user_id_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX membership_user_id_company_id ON public.membership USING btree (user_id, company_id);


--
-- Name: order_company_external_ref; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX order_company_external_ref ON public."order" USING btree (company_id, external_ref) WHERE (external_ref IS NOT NULL);


--
-- Name: order_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_company_id ON public."order" USING btree (company_id);


--
-- Name: order_company_id_created_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_company_id_created_at ON public."order" USING btree (company_id, created_at);


--
-- Name: order_company_id_finished_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_company_id_finished_at ON public."order" USING btree (company_id, finished_at);


--
-- Name: order_company_id_revision; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_company_id_revision ON public."order" USING btree (company_id, revision, id);


--
-- Name: order_company_id_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_company_id_status ON public."order" USING btree (company_id, status);


--
-- Name: order_company_id_window_start; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_company_id_window_start ON public."order" USING btree (company_id, window_start);


--
-- Name: order_courier_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_courier_id ON public."order" USING btree (courier_id);


--
-- Name: order_courier_id_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_courier_id_status ON public."order" USING btree (courier_id, status);


--
-- Name: order_event_actor_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_event_actor_id ON public.order_event USING btree (actor_id);


--
-- Name: order_event_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_event_company_id ON public.order_event USING btree (company_id);


--
-- Name: order_event_courier; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_event_courier ON public.order_event USING btree (courier_id, to_status);


--
-- Name: order_event_order_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_event_order_id ON public.order_event USING btree (order_id);


--
-- Name: order_last_courier_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_last_courier_id ON public."order" USING btree (last_courier_id);


--
-- Name: order_public_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX order_public_id ON public."order" USING btree (public_id);


--
-- Name: order_webhook_delivery_endpoint_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_webhook_delivery_endpoint_id ON public.order_webhook_delivery USING btree (endpoint_id);


--
-- Name: order_webhook_delivery_message_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_webhook_delivery_message_id ON public.order_webhook_delivery USING btree (message_id);


--
-- Name: order_webhook_delivery_status_next_attempt_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX order_webhook_delivery_status_next_attempt_at ON public.order_webhook_delivery USING btree (status, next_attempt_at);


--
-- Name: outgoing_mail_status_next_attempt_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX outgoing_mail_status_next_attempt_at ON public.outgoing_mail USING btree (status, next_attempt_at);


--
-- Name: rating_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX rating_company_id ON public.rating USING btree (company_id);


--
-- Name: rating_order_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX rating_order_id ON public.rating USING btree (order_id);


--
-- Name: realtime_event_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX realtime_event_company_id ON public.realtime_event USING btree (company_id);


--
-- Name: realtime_event_company_id_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX realtime_event_company_id_id ON public.realtime_event USING btree (company_id, id);


--
-- Name: recipient_link_link_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX recipient_link_link_id ON public.recipient_link USING btree (link_id);


--
-- Name: recipient_message_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX recipient_message_company_id ON public.recipient_message USING btree (company_id);


--
-- Name: recipient_message_company_id_provider_message_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX recipient_message_company_id_provider_message_id ON public.recipient_message USING btree (company_id, provider_message_id);


--
-- Name: recipient_message_dedupe_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX recipient_message_dedupe_key ON public.recipient_message USING btree (dedupe_key);


--
-- Name: recipient_message_order_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX recipient_message_order_id ON public.recipient_message USING btree (order_id);


--
-- Name: recipient_message_order_id_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX recipient_message_order_id_id ON public.recipient_message USING btree (order_id, id);


--
-- Name: recipient_message_status_next_attempt_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX recipient_message_status_next_attempt_at ON public.recipient_message USING btree (status, next_attempt_at);


--
-- Name: refresh_token_session_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX refresh_token_session_id ON public.refresh_token USING btree (session_id);


--
-- Name: refresh_token_token_hash; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX refresh_token_token_hash ON public.refresh_token USING btree (token_hash);


--
-- Name: settlement_accepted_by_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX settlement_accepted_by_id ON public.settlement USING btree (accepted_by_id);


--
-- Name: settlement_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX settlement_company_id ON public.settlement USING btree (company_id);


--
-- Name: settlement_courier_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX settlement_courier_id ON public.settlement USING btree (courier_id);


--
-- Name: settlement_courier_id_awaiting; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX settlement_courier_id_awaiting ON public.settlement USING btree (courier_id, awaiting);


--
-- Name: shift_courier_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX shift_courier_id ON public.shift USING btree (courier_id);


--
-- Name: shift_courier_id_open_flag; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX shift_courier_id_open_flag ON public.shift USING btree (courier_id, open_flag);


--
-- Name: shift_courier_id_started_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX shift_courier_id_started_at ON public.shift USING btree (courier_id, started_at);


--
-- Name: shift_ended_by_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX shift_ended_by_id ON public.shift USING btree (ended_by_id);


--
-- Name: status_request_courier_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX status_request_courier_id ON public.status_request USING btree (courier_id);


--
-- Name: status_request_courier_id_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX status_request_courier_id_key ON public.status_request USING btree (courier_id, key);


--
-- Name: tracking_link_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tracking_link_company_id ON public.tracking_link USING btree (company_id);


--
-- Name: tracking_link_order_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tracking_link_order_id ON public.tracking_link USING btree (order_id);


--
-- Name: tracking_link_order_id_revoked_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tracking_link_order_id_revoked_at ON public.tracking_link USING btree (order_id, revoked_at);


--
-- Name: tracking_link_token_hash; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX tracking_link_token_hash ON public.tracking_link USING btree (token_hash);


--
-- Name: user_email; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX user_email ON public."user" USING btree (email);


--
-- Name: user_last_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX user_last_company_id ON public."user" USING btree (last_company_id);


--
-- Name: webhook_message_company_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_message_company_id ON public.webhook_message USING btree (company_id);


--
-- Name: webhook_message_message_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_message_message_id ON public.webhook_message USING btree (message_id);


--
-- Name: order_event order_event_no_change; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER order_event_no_change BEFORE DELETE OR UPDATE ON public.order_event FOR EACH ROW EXECUTE FUNCTION public.order_event_append_only();


--
-- Name: order order_revision; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER order_revision BEFORE UPDATE ON public."order" FOR EACH ROW EXECUTE FUNCTION public.order_next_revision();


--
-- Name: realtime_event realtime_event_no_recent_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER realtime_event_no_recent_delete BEFORE DELETE ON public.realtime_event FOR EACH ROW WHEN ((old.created_at > ((now() AT TIME ZONE 'UTC'::text) - '1 day'::interval))) EXECUTE FUNCTION public.realtime_event_append_only();


--
-- Name: realtime_event realtime_event_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER realtime_event_no_update BEFORE UPDATE ON public.realtime_event FOR EACH ROW EXECUTE FUNCTION public.realtime_event_append_only();


--
-- Name: assignment assignment_courier_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.assignment
    ADD CONSTRAINT assignment_courier_id_fkey FOREIGN KEY (courier_id) REFERENCES public.courier(id) ON DELETE CASCADE;


--
-- Name: assignment assignment_order_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.assignment
    ADD CONSTRAINT assignment_order_id_fkey FOREIGN KEY (order_id) REFERENCES public."order"(id) ON DELETE CASCADE;


--
-- Name: auth_session auth_session_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_session
    ADD CONSTRAINT auth_session_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: auth_session auth_session_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_session
    ADD CONSTRAINT auth_session_user_id_fkey FOREIGN KEY (user_id) REFERENCES public."user"(id) ON DELETE CASCADE;


--
-- Name: collection collection_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collection
    ADD CONSTRAINT collection_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: collection collection_courier_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collection
    ADD CONSTRAINT collection_courier_id_fkey FOREIGN KEY (courier_id) REFERENCES public.courier(id) ON DELETE CASCADE;


--
-- Name: collection collection_order_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collection
    ADD CONSTRAINT collection_order_id_fkey FOREIGN KEY (order_id) REFERENCES public."order"(id) ON DELETE CASCADE;


--
-- Name: collection collection_settlement_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collection
    ADD CONSTRAINT collection_settlement_id_fkey FOREIGN KEY (settlement_id) REFERENCES public.settlement(id) ON DELETE SET NULL;


--
-- Name: company_webhook company_webhook_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.company_webhook
    ADD CONSTRAINT company_webhook_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: courier courier_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.courier
    ADD CONSTRAINT courier_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: courier_location courier_location_courier_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.courier_location
    ADD CONSTRAINT courier_location_courier_id_fkey FOREIGN KEY (courier_id) REFERENCES public.courier(id) ON DELETE CASCADE;


--
-- Name: courier courier_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.courier
    ADD CONSTRAINT courier_user_id_fkey FOREIGN KEY (user_id) REFERENCES public."user"(id) ON DELETE SET NULL;


--
-- Name: depot depot_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.depot
    ADD CONSTRAINT depot_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: integration_key integration_key_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.integration_key
    ADD CONSTRAINT integration_key_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: integration_key integration_key_created_by_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.integration_key
    ADD CONSTRAINT integration_key_created_by_id_fkey FOREIGN KEY (created_by_id) REFERENCES public."user"(id) ON DELETE SET NULL;


--
-- Name: link_token link_token_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.link_token
    ADD CONSTRAINT link_token_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: link_token link_token_courier_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.link_token
    ADD CONSTRAINT link_token_courier_id_fkey FOREIGN KEY (courier_id) REFERENCES public.courier(id) ON DELETE CASCADE;


--
-- Name: link_token link_token_invited_by_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.link_token
    ADD CONSTRAINT link_token_invited_by_id_fkey FOREIGN KEY (invited_by_id) REFERENCES public."user"(id) ON DELETE SET NULL;


--
-- Name: link_token link_token_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.link_token
    ADD CONSTRAINT link_token_user_id_fkey FOREIGN KEY (user_id) REFERENCES public."user"(id) ON DELETE CASCADE;


--
-- Name: membership membership_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.membership
    ADD CONSTRAINT membership_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: membership membership_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.membership
    ADD CONSTRAINT membership_user_id_fkey FOREIGN KEY (user_id) REFERENCES public."user"(id) ON DELETE CASCADE;


--
-- Name: order order_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."order"
    ADD CONSTRAINT order_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: order order_courier_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."order"
    ADD CONSTRAINT order_courier_id_fkey FOREIGN KEY (courier_id) REFERENCES public.courier(id) ON DELETE SET NULL;


--
-- Name: order_event order_event_actor_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.order_event
    ADD CONSTRAINT order_event_actor_id_fkey FOREIGN KEY (actor_id) REFERENCES public."user"(id) ON DELETE RESTRICT;


--
-- Name: order_event order_event_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.order_event
    ADD CONSTRAINT order_event_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE RESTRICT;


--
-- Name: order_event order_event_order_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.order_event
    ADD CONSTRAINT order_event_order_id_fkey FOREIGN KEY (order_id) REFERENCES public."order"(id) ON DELETE RESTRICT;


--
-- Name: order order_last_courier_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."order"
    ADD CONSTRAINT order_last_courier_id_fkey FOREIGN KEY (last_courier_id) REFERENCES public.courier(id) ON DELETE SET NULL;


--
-- Name: order_webhook_delivery order_webhook_delivery_endpoint_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.order_webhook_delivery
    ADD CONSTRAINT order_webhook_delivery_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES public.company_webhook(id) ON DELETE CASCADE;


--
-- Name: order_webhook_delivery order_webhook_delivery_message_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.order_webhook_delivery
    ADD CONSTRAINT order_webhook_delivery_message_id_fkey FOREIGN KEY (message_id) REFERENCES public.webhook_message(id) ON DELETE CASCADE;


--
-- Name: rating rating_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rating
    ADD CONSTRAINT rating_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: rating rating_order_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rating
    ADD CONSTRAINT rating_order_id_fkey FOREIGN KEY (order_id) REFERENCES public."order"(id) ON DELETE CASCADE;


--
-- Name: realtime_event realtime_event_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.realtime_event
    ADD CONSTRAINT realtime_event_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: recipient_link recipient_link_link_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recipient_link
    ADD CONSTRAINT recipient_link_link_id_fkey FOREIGN KEY (link_id) REFERENCES public.tracking_link(id) ON DELETE CASCADE;


--
-- Name: recipient_link recipient_link_order_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recipient_link
    ADD CONSTRAINT recipient_link_order_id_fkey FOREIGN KEY (order_id) REFERENCES public."order"(id) ON DELETE CASCADE;


--
-- Name: recipient_message recipient_message_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recipient_message
    ADD CONSTRAINT recipient_message_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: recipient_message recipient_message_order_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recipient_message
    ADD CONSTRAINT recipient_message_order_id_fkey FOREIGN KEY (order_id) REFERENCES public."order"(id) ON DELETE CASCADE;


--
-- Name: recipient_settings recipient_settings_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.recipient_settings
    ADD CONSTRAINT recipient_settings_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: refresh_token refresh_token_session_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.refresh_token
    ADD CONSTRAINT refresh_token_session_id_fkey FOREIGN KEY (session_id) REFERENCES public.auth_session(id) ON DELETE CASCADE;


--
-- Name: settlement settlement_accepted_by_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.settlement
    ADD CONSTRAINT settlement_accepted_by_id_fkey FOREIGN KEY (accepted_by_id) REFERENCES public."user"(id) ON DELETE SET NULL;


--
-- Name: settlement settlement_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.settlement
    ADD CONSTRAINT settlement_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: settlement settlement_courier_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.settlement
    ADD CONSTRAINT settlement_courier_id_fkey FOREIGN KEY (courier_id) REFERENCES public.courier(id) ON DELETE CASCADE;


--
-- Name: shift shift_courier_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shift
    ADD CONSTRAINT shift_courier_id_fkey FOREIGN KEY (courier_id) REFERENCES public.courier(id) ON DELETE CASCADE;


--
-- Name: shift shift_ended_by_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shift
    ADD CONSTRAINT shift_ended_by_id_fkey FOREIGN KEY (ended_by_id) REFERENCES public."user"(id) ON DELETE SET NULL;


--
-- Name: status_request status_request_courier_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.status_request
    ADD CONSTRAINT status_request_courier_id_fkey FOREIGN KEY (courier_id) REFERENCES public.courier(id) ON DELETE CASCADE;


--
-- Name: tracking_link tracking_link_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tracking_link
    ADD CONSTRAINT tracking_link_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- Name: tracking_link tracking_link_order_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tracking_link
    ADD CONSTRAINT tracking_link_order_id_fkey FOREIGN KEY (order_id) REFERENCES public."order"(id) ON DELETE CASCADE;


--
-- Name: user user_last_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."user"
    ADD CONSTRAINT user_last_company_id_fkey FOREIGN KEY (last_company_id) REFERENCES public.company(id) ON DELETE SET NULL;


--
-- Name: webhook_message webhook_message_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_message
    ADD CONSTRAINT webhook_message_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.company(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--

\unrestrict stzo3dVH6G0MJNctewDGGIcCyEaf44daP0GM5G0uZ1JuaxbLQkwiuSV95KOGDWs

