#!/bin/tclsh
# HammerDB TPROC-C schema build written by dbperf-operator.
# Credentials come from the environment and never appear in this file.
puts "SETTING CONFIGURATION"
dbset db mysql
dbset bm TPC-C
diset connection mysql_host bench-mysql.perf.svc
diset connection mysql_port 3306
diset connection mysql_socket null
diset connection mysql_ssl true
diset connection mysql_ssl_linux_capath /etc/dbperf/tls
diset connection mysql_ssl_ca /etc/dbperf/tls/ca.crt
diset connection mysql_ssl_two_way true
diset connection mysql_ssl_cert /etc/dbperf/tls/tls.crt
diset connection mysql_ssl_key /etc/dbperf/tls/tls.key
diset tpcc mysql_user $::env(DBPERF_TARGET_USERNAME)
diset tpcc mysql_pass $::env(DBPERF_TARGET_PASSWORD)
diset tpcc mysql_dbase tpcc
diset tpcc mysql_count_ware 1
diset tpcc mysql_partition false
diset tpcc mysql_storage_engine innodb
diset tpcc mysql_num_vu 1
puts "SCHEMA BUILD STARTED"
buildschema
puts "SCHEMA BUILD COMPLETED"
