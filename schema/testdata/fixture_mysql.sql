-- Fixture of the sys/schema tests (see fixture_sqlite.sql), with comments. MySQL and MariaDB
-- have no partial or (MariaDB) expression indexes: the unique index is a plain one.
CREATE TABLE fx_customer (
    id bigint NOT NULL AUTO_INCREMENT PRIMARY KEY,
    email varchar(200) NOT NULL COMMENT 'Login e-mail',
    name varchar(100) NOT NULL DEFAULT 'anon',
    deleted_at datetime NULL,
    CONSTRAINT fx_customer_email_chk CHECK (char_length(email) > 3),
    UNIQUE KEY fx_customer_email_live (email)
) COMMENT = 'Customers';
CREATE TABLE fx_order (
    customer_id bigint NOT NULL,
    order_no int NOT NULL,
    status varchar(16) NOT NULL DEFAULT 'new',
    total decimal(10,2) NOT NULL DEFAULT 0,
    placed_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (customer_id, order_no),
    CONSTRAINT fx_order_customer_fk FOREIGN KEY (customer_id) REFERENCES fx_customer (id) ON DELETE CASCADE,
    UNIQUE KEY fx_order_status_uq (customer_id, status, placed_at),
    CONSTRAINT fx_order_total_chk CHECK (total >= 0),
    KEY fx_order_placed_idx (placed_at, status)
);
CREATE TABLE fx_order_line (
    customer_id bigint NOT NULL,
    order_no int NOT NULL,
    line_no int NOT NULL,
    sku varchar(32) NOT NULL COMMENT 'Stock keeping unit',
    quantity int NOT NULL DEFAULT 1,
    PRIMARY KEY (customer_id, order_no, line_no),
    CONSTRAINT fx_order_line_quantity_check CHECK (quantity > 0),
    CONSTRAINT fx_order_line_order_fk FOREIGN KEY (customer_id, order_no)
        REFERENCES fx_order (customer_id, order_no) ON DELETE CASCADE ON UPDATE RESTRICT
);
CREATE VIEW fx_open_order AS SELECT customer_id, order_no, total FROM fx_order WHERE status = 'new';
