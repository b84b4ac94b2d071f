DROP TABLE message_opt_outs;
DROP TABLE organisation_message_settings;
