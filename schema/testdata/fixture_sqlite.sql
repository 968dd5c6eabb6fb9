-- Fixture of the sys/schema tests: composite keys, a partial unique index, an expression
-- index, foreign keys with ON DELETE CASCADE, check constraints and a view. SQLite has no
-- comments.
CREATE TABLE fx_customer (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    email VARCHAR(200) NOT NULL,
    name TEXT NOT NULL DEFAULT 'anon',
    deleted_at TIMESTAMP,
    CONSTRAINT fx_customer_email_chk CHECK (length(email) > 3)
);
CREATE UNIQUE INDEX fx_customer_email_live ON fx_customer (email) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX fx_customer_name_lower ON fx_customer (lower(name), id);
CREATE TABLE fx_order (
    customer_id INTEGER NOT NULL,
    order_no INTEGER NOT NULL,
    status VARCHAR(16) NOT NULL DEFAULT 'new',
    total NUMERIC(10,2) NOT NULL DEFAULT 0,
    placed_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT fx_order_pk PRIMARY KEY (customer_id, order_no),
    CONSTRAINT fx_order_customer_fk FOREIGN KEY (customer_id) REFERENCES fx_customer (id) ON DELETE CASCADE,
    CONSTRAINT fx_order_status_uq UNIQUE (customer_id, status, placed_at),
    CONSTRAINT fx_order_total_chk CHECK (total >= 0)
);
CREATE INDEX fx_order_placed_idx ON fx_order (placed_at, status);
CREATE TABLE fx_order_line (
    customer_id INTEGER NOT NULL,
    order_no INTEGER NOT NULL,
    line_no INTEGER NOT NULL,
    sku VARCHAR(32) NOT NULL,
    quantity INTEGER NOT NULL DEFAULT 1 CHECK (quantity > 0),
    PRIMARY KEY (customer_id, order_no, line_no),
    CONSTRAINT fx_order_line_order_fk FOREIGN KEY (customer_id, order_no)
        REFERENCES fx_order (customer_id, order_no) ON DELETE CASCADE ON UPDATE RESTRICT
);
CREATE VIEW fx_open_order AS SELECT customer_id, order_no, total FROM fx_order WHERE status = 'new';
