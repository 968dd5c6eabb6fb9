-- Fixture of the sys/schema tests (see fixture_sqlite.sql), with comments.
CREATE TABLE fx_customer (
    id bigserial PRIMARY KEY,
    email varchar(200) NOT NULL,
    name text NOT NULL DEFAULT 'anon',
    deleted_at timestamptz,
    CONSTRAINT fx_customer_email_chk CHECK (length(email) > 3)
);
COMMENT ON TABLE fx_customer IS 'Customers';
COMMENT ON COLUMN fx_customer.email IS 'Login e-mail';
CREATE UNIQUE INDEX fx_customer_email_live ON fx_customer (email) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX fx_customer_name_lower ON fx_customer (lower(name), id);
CREATE TABLE fx_order (
    customer_id bigint NOT NULL,
    order_no integer NOT NULL,
    status varchar(16) NOT NULL DEFAULT 'new',
    total numeric(10,2) NOT NULL DEFAULT 0,
    placed_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT fx_order_pk PRIMARY KEY (customer_id, order_no),
    CONSTRAINT fx_order_customer_fk FOREIGN KEY (customer_id) REFERENCES fx_customer (id) ON DELETE CASCADE,
    CONSTRAINT fx_order_status_uq UNIQUE (customer_id, status, placed_at),
    CONSTRAINT fx_order_total_chk CHECK (total >= 0)
);
CREATE INDEX fx_order_placed_idx ON fx_order (placed_at, status);
CREATE TABLE fx_order_line (
    customer_id bigint NOT NULL,
    order_no integer NOT NULL,
    line_no integer GENERATED ALWAYS AS IDENTITY,
    sku varchar(32) NOT NULL,
    quantity integer NOT NULL DEFAULT 1 CONSTRAINT fx_order_line_quantity_check CHECK (quantity > 0),
    PRIMARY KEY (customer_id, order_no, line_no),
    CONSTRAINT fx_order_line_order_fk FOREIGN KEY (customer_id, order_no)
        REFERENCES fx_order (customer_id, order_no) ON DELETE CASCADE ON UPDATE RESTRICT
);
COMMENT ON COLUMN fx_order_line.sku IS 'Stock keeping unit';
CREATE VIEW fx_open_order AS SELECT customer_id, order_no, total FROM fx_order WHERE status = 'new';
COMMENT ON VIEW fx_open_order IS 'Orders not yet processed';
