-- The Star Schema Benchmark's tables in standard SQL (PostgreSQL, MySQL,
-- MariaDB), for the joined queries of ssb.sql. The date dimension is
-- dwdate, as Amazon Redshift's SSB names it: "date" is a keyword.
DROP TABLE IF EXISTS lineorder;
DROP TABLE IF EXISTS customer;
DROP TABLE IF EXISTS supplier;
DROP TABLE IF EXISTS part;
DROP TABLE IF EXISTS dwdate;

CREATE TABLE customer (
    c_custkey integer PRIMARY KEY, c_name varchar(25), c_address varchar(40), c_city varchar(10),
    c_nation varchar(15), c_region varchar(12), c_phone varchar(15), c_mktsegment varchar(10)
);

CREATE TABLE supplier (
    s_suppkey integer PRIMARY KEY, s_name varchar(25), s_address varchar(40), s_city varchar(10),
    s_nation varchar(15), s_region varchar(12), s_phone varchar(15)
);

CREATE TABLE part (
    p_partkey integer PRIMARY KEY, p_name varchar(40), p_mfgr varchar(6), p_category varchar(7),
    p_brand varchar(9), p_color varchar(20), p_type varchar(25), p_size integer, p_container varchar(10)
);

CREATE TABLE dwdate (
    d_datekey integer PRIMARY KEY, d_date varchar(18), d_dayofweek varchar(9), d_month varchar(9), d_year integer,
    d_yearmonthnum integer, d_yearmonth varchar(7), d_daynuminweek integer, d_daynuminmonth integer,
    d_daynuminyear integer, d_monthnuminyear integer, d_weeknuminyear integer, d_sellingseason varchar(12),
    d_lastdayinweekfl integer, d_lastdayinmonthfl integer, d_holidayfl integer, d_weekdayfl integer
);

CREATE TABLE lineorder (
    lo_orderkey integer, lo_linenumber integer, lo_custkey integer, lo_partkey integer, lo_suppkey integer,
    lo_orderdate integer, lo_orderpriority varchar(15), lo_shippriority varchar(1), lo_quantity integer,
    lo_extendedprice bigint, lo_ordtotalprice bigint, lo_discount integer, lo_revenue bigint,
    lo_supplycost bigint, lo_tax integer, lo_commitdate integer, lo_shipmode varchar(10),
    PRIMARY KEY (lo_orderkey, lo_linenumber)
);
